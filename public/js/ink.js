// The signature pad: records Pointer Events (pen, touch, mouse; coalesced samples; pressure where
// the device reports it) as countersign.ink/v1 and draws, while the signer writes, the outline the
// server will store: the weighted-Bézier reconstruction of the rounded points (outline.js).
//
// Ink units are the canvas' CSS pixels at the first point of the signature, so the document says
// how big the pad looked to the signer. The backing store is sized for devicePixelRatio; pointer
// positions are mapped through getBoundingClientRect, so CSS scaling never distorts the ink.
// The canvas holds the ink only (the baseline is the stylesheet's background), so its pixels can
// be compared with the server's rendering.
import { StrokeOutline, tracePath } from './outline.js';

const round1 = (value) => Math.round(value * 10) / 10;
const round3 = (value) => Math.round(value * 1000) / 1000;
/** The server's default ink colour (RenderOptions.color), so the pad looks like the stored PNG. */
const INK_COLOUR = '#000000';

export class InkPad {
  #canvas;
  #context;
  #strokes = [];      // [{pointerType, pressure: bool, points: [{x, y, t, p}], outline: StrokeOutline}]
  #committed;         // a canvas with every finalised shape; the live stroke's pending shape goes on top
  #lastPending = [];  // the pending shape on the canvas now (its pixels are redrawn with the next point)
  #pointerId = null;  // the pointer drawing now; other pointers (a palm, a second finger) are ignored
  #size = null;       // {width, height} of the ink canvas, fixed at the first point
  #origin = 0;        // event timeStamp of the first point
  #startedAt = null;  // wall-clock Date of the first point
  #onChange;

  /** `onChange()` runs after every finished stroke, undo and clear. */
  constructor(canvas, onChange = () => {}) {
    this.#canvas = canvas;
    this.#context = canvas.getContext('2d');
    this.#committed = document.createElement('canvas');
    this.#onChange = onChange;
    canvas.addEventListener('pointerdown', (event) => this.#down(event));
    canvas.addEventListener('pointermove', (event) => this.#move(event));
    canvas.addEventListener('pointerup', (event) => this.#up(event));
    canvas.addEventListener('pointercancel', (event) => this.#up(event));
    new ResizeObserver(() => this.#resize()).observe(canvas);
    this.#resize();
  }

  get isEmpty() { return this.#strokes.length === 0; }
  get strokeCount() { return this.#strokes.length; }
  get pointCount() { return this.#strokes.reduce((sum, stroke) => sum + stroke.points.length, 0); }
  /** When the first point was drawn (null while empty). */
  get startedAt() { return this.#startedAt; }

  undo() {
    if (this.#pointerId !== null) return;
    this.#strokes.pop();
    if (this.#strokes.length === 0) this.#reset();
    this.#redraw();
    this.#onChange();
  }

  clear() {
    this.#strokes = [];
    this.#pointerId = null;
    this.#reset();
    this.#redraw();
    this.#onChange();
  }

  /**
   * The signature as a countersign.ink/v1 object: x, y rounded to 0.1 canvas units, t in whole
   * milliseconds from the first point (never decreasing), p to 0.001 when the device reported it.
   */
  toInk() {
    const first = this.#strokes[0]?.points[0]?.t ?? 0;
    let last = 0;
    const strokes = this.#strokes.map((stroke) => stroke.points.map((point) => {
      last = Math.max(last, Math.round(point.t - first));
      const sample = [round1(point.x), round1(point.y), last];
      if (stroke.pressure) sample.push(round3(point.p));
      return sample;
    }));
    return { format: 'countersign.ink/v1', canvas: { ...this.#size }, strokes };
  }

  #reset() {
    this.#size = null;
    this.#startedAt = null;
    this.#origin = 0;
  }

  #down(event) {
    if (this.#pointerId !== null || (event.pointerType === 'mouse' && event.button !== 0)) return;
    event.preventDefault();
    const rect = this.#canvas.getBoundingClientRect();
    if (rect.width < 1 || rect.height < 1) return;
    this.#canvas.setPointerCapture?.(event.pointerId);
    this.#pointerId = event.pointerId;
    if (!this.#size) {
      this.#size = { width: Math.round(rect.width), height: Math.round(rect.height) };
      this.#origin = event.timeStamp;
      this.#startedAt = new Date();
      this.#resize();
    }
    const stroke = { pointerType: event.pointerType, pressure: true, points: [], outline: new StrokeOutline() };
    this.#strokes.push(stroke);
    this.#drawLive(stroke, this.#add(event, rect));
  }

  #move(event) {
    if (event.pointerId !== this.#pointerId) return;
    event.preventDefault();
    const rect = this.#canvas.getBoundingClientRect();
    const coalesced = event.getCoalescedEvents?.() ?? [];
    // Every sample goes into the ink and the outline; the canvas is drawn once per event (a fast
    // pen delivers several samples per frame).
    const finalised = [];
    for (const sample of coalesced.length > 0 ? coalesced : [event]) finalised.push(...this.#add(sample, rect));
    this.#drawLive(this.#strokes.at(-1), finalised);
  }

  #up(event) {
    if (event.pointerId !== this.#pointerId) return;
    this.#pointerId = null;
    const stroke = this.#strokes.at(-1);
    // A mouse reports 0.5 while a button is down and many touch screens report a constant too:
    // a pressure that never changes (except from a pen) is no pressure at all.
    const pressures = new Set(stroke.points.map((point) => point.p));
    stroke.pressure = stroke.pointerType === 'pen' || pressures.size > 1;
    // The whole outline as one non-zero fill, exactly as the server's SVG draws it.
    this.#redraw();
    this.#onChange();
  }

  /** Records one sample; returns the shapes it finalised in the stroke's outline (usually none). */
  #add(sample, rect) {
    const stroke = this.#strokes.at(-1);
    const { width, height } = this.#size;
    // Pointer capture keeps delivering points that left the pad; they are pinned to its edge.
    // Rounded here, as toInk sends them, so the outline drawn is the one the server reconstructs.
    const x = round1(Math.min(width, Math.max(0, (sample.clientX - rect.left) * width / rect.width)));
    const y = round1(Math.min(height, Math.max(0, (sample.clientY - rect.top) * height / rect.height)));
    const previous = stroke.points.at(-1);
    const t = Math.max(previous?.t ?? 0, sample.timeStamp - this.#origin);
    const p = Math.min(1, Math.max(0, sample.pressure ?? 0.5));
    stroke.points.push({ x, y, t, p });
    const finalisedBefore = stroke.outline.finalized.length;
    stroke.outline.add(x, y);
    return stroke.outline.finalized.slice(finalisedBefore);
  }

  #resize() {
    const rect = this.#canvas.getBoundingClientRect();
    const ratio = window.devicePixelRatio || 1;
    const width = Math.max(1, Math.round(rect.width * ratio));
    const height = Math.max(1, Math.round(rect.height * ratio));
    if (this.#canvas.width !== width || this.#canvas.height !== height) {
      this.#canvas.width = width;
      this.#canvas.height = height;
      this.#committed.width = width;
      this.#committed.height = height;
    }
    this.#redraw();
  }

  /** Ink units to backing-store pixels on a context. */
  #applyTransform(context) {
    const rect = this.#canvas.getBoundingClientRect();
    const size = this.#size ?? { width: rect.width || 1, height: rect.height || 1 };
    context.setTransform(this.#canvas.width / size.width, 0, 0, this.#canvas.height / size.height, 0, 0);
  }

  /** Fills path elements (canvas units) on a context, non-zero, in the ink colour. */
  #fill(context, elements) {
    if (elements.length === 0) return;
    this.#applyTransform(context);
    context.fillStyle = INK_COLOUR;
    context.fill(tracePath(new Path2D(), elements), 'nonzero');
    context.setTransform(1, 0, 0, 1, 0, 0);
  }

  /**
   * The whole signature: the outline of every finished stroke in one path, as the server's SVG has
   * it (non-zero fill), on the canvas and on the committed layer; a stroke still being drawn adds
   * its finalised shapes to both and its pending shape to the canvas only.
   */
  #redraw() {
    const open = this.#pointerId !== null ? this.#strokes.at(-1) : null;
    const settled = this.#strokes.flatMap((stroke) => (stroke === open ? stroke.outline.finalized : stroke.outline.elements()));
    const committed = this.#committed.getContext('2d');
    committed.setTransform(1, 0, 0, 1, 0, 0);
    committed.clearRect(0, 0, this.#committed.width, this.#committed.height);
    this.#fill(committed, settled);
    const context = this.#context;
    context.setTransform(1, 0, 0, 1, 0, 0);
    context.clearRect(0, 0, this.#canvas.width, this.#canvas.height);
    this.#fill(context, settled);
    this.#lastPending = open ? open.outline.pending() : [];
    this.#fill(context, this.#lastPending);
  }

  /**
   * While a stroke is drawn: shapes it just finalised go on the committed layer for good; the
   * canvas shows that layer plus the stroke's pending shape (it changes with every point).
   */
  #drawLive(stroke, finalised) {
    this.#fill(this.#committed.getContext('2d'), finalised);
    const pending = stroke.outline.pending();
    // Only the pixels that can change: where the last pending shape was, the shapes just
    // finalised and the new pending shape (a small box, not the whole canvas).
    const box = this.#pixelBox([this.#lastPending, finalised, pending]);
    this.#lastPending = pending;
    if (!box) return;
    const context = this.#context;
    context.save();
    context.beginPath();
    context.rect(box.x, box.y, box.width, box.height);
    context.clip();
    context.clearRect(box.x, box.y, box.width, box.height);
    context.drawImage(this.#committed, box.x, box.y, box.width, box.height, box.x, box.y, box.width, box.height);
    this.#fill(context, pending);
    context.restore();
  }

  /** The backing-store pixels covering path elements (every point, control points included), or null. */
  #pixelBox(groups) {
    let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
    for (const elements of groups) {
      for (const element of elements) {
        for (let i = 1; i + 1 < element.length; i += 2) {
          minX = Math.min(minX, element[i]); maxX = Math.max(maxX, element[i]);
          minY = Math.min(minY, element[i + 1]); maxY = Math.max(maxY, element[i + 1]);
        }
      }
    }
    if (minX > maxX || !this.#size) return null;
    const sx = this.#canvas.width / this.#size.width;
    const sy = this.#canvas.height / this.#size.height;
    // Two pixels more on each side for anti-aliasing; whole pixels so drawImage copies exactly.
    const x = Math.max(0, Math.floor(minX * sx) - 2);
    const y = Math.max(0, Math.floor(minY * sy) - 2);
    const right = Math.min(this.#canvas.width, Math.ceil(maxX * sx) + 2);
    const bottom = Math.min(this.#canvas.height, Math.ceil(maxY * sy) + 2);
    return right > x && bottom > y ? { x, y, width: right - x, height: bottom - y } : null;
  }
}
