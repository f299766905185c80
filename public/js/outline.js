// The weighted-Bézier outline of a signature, point by point: a port of SignatureKit's
// SignatureReconstructor and WeightedShapes (Sources/SignatureKit/Reconstruction), which the
// server uses for the stored PNG and SVG ("ubersignature-weighted-bezier/1", default options:
// pressure does not change the width). The pad draws with it, so the live stroke is the stored
// one. Keep the two in step: Tests/browser compares the pad with the server's SVG (PSNR ≥ 35 dB).
//
// Path elements are arrays in canvas units: ['M', x, y], ['L', x, y], ['Q', cx, cy, x, y],
// ['C', c1x, c1y, c2x, c2y, x, y], ['Z']. Every shape is a closed subpath, filled non-zero.

export const ALGORITHM_VERSION = 'ubersignature-weighted-bezier/1';

/** A point closer than this (canvas units) to the previous accepted point is skipped. */
const MIN_DISTANCE = 2;
/** Weight (full width) of the first point of a stroke. */
const DOT_WEIGHT = 3;
/** Bézier circle constant 4/3·(√2 − 1), written as in WeightedShapes.kappa. */
const KAPPA = 0.5522847498307936;

/** UberSignature's weight for a segment of length d: max(0, 50 − d)·0.1 + 2. */
const weightForDistance = (d) => Math.max(0, 50 - d) * 0.1 + 2;
const distance = (a, b) => {
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  return Math.sqrt(dx * dx + dy * dy);
};
const midpoint = (a, b) => ({ x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 });

/** A bar of `length` centred on `middle`, perpendicular to from → to (the middle point when degenerate). */
function perpendicular(from, to, middle, length) {
  let rx = to.x - from.x;
  let ry = to.y - from.y;
  if (length === 0 || (rx === 0 && ry === 0)) return { start: middle, end: middle };
  const modifier = (length / 2) / Math.sqrt(rx * rx + ry * ry);
  rx *= modifier;
  ry *= modifier;
  return { start: { x: ry + middle.x, y: -rx + middle.y }, end: { x: -ry + middle.x, y: rx + middle.y } };
}

/** The bars at a and at b for the segment a → b, each with its own point's weight. */
function bars(a, b) {
  return [perpendicular(a.point, b.point, a.point, a.weight), perpendicular(a.point, b.point, b.point, b.weight)];
}

const average = (a, b) => ({ start: midpoint(a.start, b.start), end: midpoint(a.end, b.end) });

function dot(a, out) {
  const { x, y } = a.point;
  const r = a.weight;
  const k = KAPPA * a.weight;
  out.push(['M', x + r, y],
    ['C', x + r, y + k, x + k, y + r, x, y + r],
    ['C', x - k, y + r, x - r, y + k, x - r, y],
    ['C', x - r, y - k, x - k, y - r, x, y - r],
    ['C', x + k, y - r, x + r, y - k, x + r, y],
    ['Z']);
}

function line(a, b, out) {
  const [la, lb] = bars(a, b);
  out.push(['M', la.start.x, la.start.y], ['L', lb.start.x, lb.start.y], ['L', lb.end.x, lb.end.y],
    ['L', la.end.x, la.end.y], ['Z']);
}

function quad(a, b, c, out) {
  const [abA, abB] = bars(a, b);
  const [bcB, bcC] = bars(b, c);
  const lineB = average(abB, bcB);
  out.push(['M', abA.start.x, abA.start.y], ['Q', lineB.start.x, lineB.start.y, bcC.start.x, bcC.start.y],
    ['L', bcC.end.x, bcC.end.y], ['Q', lineB.end.x, lineB.end.y, abA.end.x, abA.end.y], ['Z']);
}

function cubic(a, b, c, d, out) {
  const [abA, abB] = bars(a, b);
  const [bcB, bcC] = bars(b, c);
  const [cdC, cdD] = bars(c, d);
  const lineB = average(abB, bcB);
  const lineC = average(bcC, cdC);
  out.push(['M', abA.start.x, abA.start.y],
    ['C', lineB.start.x, lineB.start.y, lineC.start.x, lineC.start.y, cdD.start.x, cdD.start.y],
    ['L', cdD.end.x, cdD.end.y],
    ['C', lineC.end.x, lineC.end.y, lineB.end.x, lineB.end.y, abA.end.x, abA.end.y],
    ['Z']);
}

/**
 * One stroke's outline, fed point by point (SignatureReconstructor's state machine: up to four
 * weighted points are held; a fifth finalises a cubic that ends at the midpoint of points 3 and 5).
 */
export class StrokeOutline {
  #held = [];        // the weighted points not yet finalised: {point: {x, y}, weight}
  /** Finalised closed subpaths of this stroke, in order. */
  finalized = [];

  /** Adds a point (canvas units); false when it was skipped as closer than 2 units to the previous one. */
  add(x, y) {
    const point = { x, y };
    const held = this.#held;
    if (held.length === 0) {
      held.push({ point, weight: DOT_WEIGHT });
      return true;
    }
    const previous = held[held.length - 1].point;
    if (distance(previous, point) < MIN_DISTANCE) return false;
    if (held.length > 3) {
      // The join: point 4 becomes the midpoint of points 3 and the new one; finalise; restart there.
      const mid = midpoint(held[2].point, point);
      held[3] = { point: mid, weight: weightForDistance(distance(held[2].point, mid)) };
      cubic(held[0], held[1], held[2], held[3], this.finalized);
      this.#held = [held[3]];
    }
    // Weighted by the distance to the previous accepted point (the original point 4 after a join).
    this.#held.push({ point, weight: weightForDistance(distance(previous, point)) });
    return true;
  }

  /** The shape of the points not yet finalised (dot, line, quad or cubic); what ending the stroke now keeps. */
  pending() {
    const out = [];
    const [a, b, c, d] = this.#held;
    switch (this.#held.length) {
      case 1: dot(a, out); break;
      case 2: line(a, b, out); break;
      case 3: quad(a, b, c, out); break;
      case 4: cubic(a, b, c, d, out); break;
      default: break;
    }
    return out;
  }

  /** Every element of the stroke as it would be stored if it ended now. */
  elements() {
    return this.finalized.concat(this.pending());
  }
}

/** The whole outline of ink/v1 strokes ([[x, y, t, p?], …]), as the server reconstructs it. */
export function outlineOfStrokes(strokes) {
  const out = [];
  for (const stroke of strokes) {
    const builder = new StrokeOutline();
    for (const [x, y] of stroke) builder.add(x, y);
    out.push(...builder.elements());
  }
  return out;
}

/** Appends path elements to a Path2D (or a CanvasRenderingContext2D's current path). */
export function tracePath(path, elements) {
  for (const e of elements) {
    switch (e[0]) {
      case 'M': path.moveTo(e[1], e[2]); break;
      case 'L': path.lineTo(e[1], e[2]); break;
      case 'Q': path.quadraticCurveTo(e[1], e[2], e[3], e[4]); break;
      case 'C': path.bezierCurveTo(e[1], e[2], e[3], e[4], e[5], e[6]); break;
      case 'Z': path.closePath(); break;
      default: break;
    }
  }
  return path;
}

/** SVG path data for elements (for tests and debugging; the server writes 2 decimals). */
export function pathData(elements, decimals = 2) {
  const n = (v) => v.toFixed(decimals);
  return elements.map((e) => e[0] + (e.length > 1 ? e.slice(1).reduce((text, v, i) =>
    text + (i === 0 ? '' : i % 2 === 0 ? ' ' : ',') + n(v), '') : '')).join('');
}
