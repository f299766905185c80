// The signature pad: records Pointer Events (pen, touch, mouse; coalesced samples; pressure where
// the device reports it) as countersign.ink/v1 and draws a live preview.
//
// Ink units are the canvas' CSS pixels at the first point of the signature, so the document says
// how big the pad looked to the signer. The backing store is sized for devicePixelRatio; pointer
// positions are mapped through getBoundingClientRect, so CSS scaling never distorts the ink.

const round1 = (value) => Math.round(value * 10) / 10;
const round3 = (value) => Math.round(value * 1000) / 1000;

export class InkPad {
  #canvas;
  #context;
  #strokes = [];      // [{pointerType, pressure: bool, points: [{x, y, t, p}]}]
  #pointerId = null;  // the pointer drawing now; other pointers (a palm, a second finger) are ignored
  #size = null;       // {width, height} of the ink canvas, fixed at the first point
  #origin = 0;        // event timeStamp of the first point
  #startedAt = null;  // wall-clock Date of the first point
  #onChange;

  /** `onChange()` runs after every finished stroke, undo and clear. */
  constructor(canvas, onChange = () => {}) {
    this.#canvas = canvas;
    this.#context = canvas.getContext('2d');
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
    this.#strokes.push({ pointerType: event.pointerType, pressure: true, points: [] });
    this.#add(event, rect);
  }

  #move(event) {
    if (event.pointerId !== this.#pointerId) return;
    event.preventDefault();
    const rect = this.#canvas.getBoundingClientRect();
    const coalesced = event.getCoalescedEvents?.() ?? [];
    for (const sample of coalesced.length > 0 ? coalesced : [event]) this.#add(sample, rect);
  }

  #up(event) {
    if (event.pointerId !== this.#pointerId) return;
    this.#pointerId = null;
    const stroke = this.#strokes.at(-1);
    // A mouse reports 0.5 while a button is down and many touch screens report a constant too:
    // a pressure that never changes (except from a pen) is no pressure at all.
    const pressures = new Set(stroke.points.map((point) => point.p));
    stroke.pressure = stroke.pointerType === 'pen' || pressures.size > 1;
    this.#onChange();
  }

  #add(sample, rect) {
    const stroke = this.#strokes.at(-1);
    const { width, height } = this.#size;
    // Pointer capture keeps delivering points that left the pad; they are pinned to its edge.
    const x = Math.min(width, Math.max(0, (sample.clientX - rect.left) * width / rect.width));
    const y = Math.min(height, Math.max(0, (sample.clientY - rect.top) * height / rect.height));
    const previous = stroke.points.at(-1);
    const t = Math.max(previous?.t ?? 0, sample.timeStamp - this.#origin);
    const p = Math.min(1, Math.max(0, sample.pressure ?? 0.5));
    const point = { x, y, t, p };
    stroke.points.push(point);
    this.#drawSegment(previous, point, stroke.pointerType === 'pen');
  }

  #resize() {
    const rect = this.#canvas.getBoundingClientRect();
    const ratio = window.devicePixelRatio || 1;
    const width = Math.max(1, Math.round(rect.width * ratio));
    const height = Math.max(1, Math.round(rect.height * ratio));
    if (this.#canvas.width !== width || this.#canvas.height !== height) {
      this.#canvas.width = width;
      this.#canvas.height = height;
    }
    this.#redraw();
  }

  /** Ink units to backing-store pixels (kept until the next redraw). */
  #applyTransform() {
    const rect = this.#canvas.getBoundingClientRect();
    const size = this.#size ?? { width: rect.width || 1, height: rect.height || 1 };
    this.#context.setTransform(this.#canvas.width / size.width, 0, 0, this.#canvas.height / size.height, 0, 0);
  }

  #redraw() {
    const context = this.#context;
    context.setTransform(1, 0, 0, 1, 0, 0);
    context.clearRect(0, 0, this.#canvas.width, this.#canvas.height);
    this.#drawBaseline();
    this.#applyTransform();
    for (const stroke of this.#strokes) {
      stroke.points.forEach((point, index) => this.#drawSegment(stroke.points[index - 1], point, stroke.pressure));
    }
  }

  #drawBaseline() {
    const context = this.#context;
    const { width, height } = this.#canvas;
    context.strokeStyle = '#9aa3b2';
    context.lineWidth = Math.max(1, width / 600);
    context.beginPath();
    context.moveTo(width * 0.06, height * 0.78);
    context.lineTo(width * 0.94, height * 0.78);
    context.stroke();
  }

  /** Draws one sample (a dot for the first of a stroke) with the current ink-to-pixel transform. */
  #drawSegment(from, to, usePressure) {
    const context = this.#context;
    const width = usePressure ? 1 + 3 * to.p : 2.5;
    context.strokeStyle = '#111827';
    context.fillStyle = '#111827';
    context.lineCap = 'round';
    context.lineJoin = 'round';
    if (!from) {
      context.beginPath();
      context.arc(to.x, to.y, width / 2, 0, Math.PI * 2);
      context.fill();
      return;
    }
    context.lineWidth = width;
    context.beginPath();
    context.moveTo(from.x, from.y);
    context.lineTo(to.x, to.y);
    context.stroke();
  }
}
