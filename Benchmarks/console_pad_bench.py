#!/usr/bin/python3
"""The signature pad's drawing cost per pointer event in headless Chromium (software raster): the
pad of today (public/js/ink.js, the weighted-Bézier outline of outline.js, redrawing only the
pending shape's pixels) against its peer in the same run, the pad before (commit 2faa6e7's ink.js,
a constant-width polyline, one stroked segment per point). Both are real InkPad objects fed the
same synthetic PointerEvents (one sample each); every event ends with a 1×1 getImageData, so the
canvas really draws it (as if every event were a frame: the worst case). A phone's pad: 346×173
CSS px at devicePixelRatio 3 (a 1038×519 backing store).

    Benchmarks/console_pad.sh [ROUNDS]      (serves public/ itself; needs chromium, chromium-driver, python3-selenium)
"""
import argparse
import json
import statistics
import sys

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

SCRIPT = r"""
const [rounds, done] = arguments;
Promise.all([import('/js/ink.js'), import('/js/ink-polyline.js')]).then(([outline, polyline]) => {
  const pads = {};
  for (const [name, module] of [['outline', outline], ['polyline', polyline]]) {
    const canvas = document.createElement('canvas');
    canvas.style.cssText = '';
    canvas.width = 1; canvas.height = 1;
    canvas.className = 'bench-pad';
    canvas.setPointerCapture = () => {};   // synthetic pointers have no capture to set
    document.body.prepend(canvas);
    pads[name] = { canvas, pad: new module.InkPad(canvas) };
  }
  // The browser test's three strokes, denser (fractions of the pad): a loop, a zig-zag, an underline.
  const strokes = [
    Array.from({ length: 400 }, (_, i) => [0.1 + 0.35 * i / 399, 0.5 - 0.3 * Math.sin(i / 399 * 2 * Math.PI)]),
    Array.from({ length: 300 }, (_, i) => [0.5 + 0.3 * i / 299, 0.3 + 0.4 * ((i % 60) / 59)]),
    Array.from({ length: 200 }, (_, i) => [0.1 + 0.8 * i / 199, 0.85]),
  ];
  const points = strokes.reduce((n, s) => n + s.length, 0);
  function run({ canvas, pad }) {
    pad.clear();
    const rect = canvas.getBoundingClientRect();
    const context = canvas.getContext('2d');
    let pointerId = 1;
    const started = performance.now();
    for (const stroke of strokes) {
      pointerId += 1;
      stroke.forEach(([fx, fy], i) => {
        const type = i === 0 ? 'pointerdown' : 'pointermove';
        canvas.dispatchEvent(new PointerEvent(type, { pointerId, pointerType: 'pen', isPrimary: true, button: 0, buttons: 1,
          clientX: rect.left + fx * rect.width, clientY: rect.top + fy * rect.height, pressure: 0.5, bubbles: true, cancelable: true }));
        context.getImageData(0, 0, 1, 1);   // the canvas really draws this event
      });
      canvas.dispatchEvent(new PointerEvent('pointerup', { pointerId, pointerType: 'pen', bubbles: true }));
      context.getImageData(0, 0, 1, 1);
    }
    return (performance.now() - started) * 1000 / points;
  }
  requestAnimationFrame(() => setTimeout(() => {
    const result = { points, backing: [pads.outline.canvas.width, pads.outline.canvas.height], outline_us: [], polyline_us: [] };
    run(pads.outline); run(pads.polyline);   // warm-up
    for (let i = 0; i < rounds; i += 1) {
      result.outline_us.push(run(pads.outline));
      result.polyline_us.push(run(pads.polyline));
    }
    result.outline_points = pads.outline.pad.pointCount;
    result.polyline_points = pads.polyline.pad.pointCount;
    done(result);
  }, 100));
}, (error) => done({ error: String(error) }));
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.set_script_timeout(300)
        # A phone: the pad is 346x173 CSS px at devicePixelRatio 3, as in the browser test.
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 3, "mobile": True})
        driver.get(args.base_url + "/bench.html")
        result = driver.execute_async_script(SCRIPT, args.rounds)
    finally:
        driver.quit()
    if "error" in result:
        print(f"console-pad-bench: {result['error']}", file=sys.stderr)
        return 1
    summary = {
        "points_per_round": result["points"], "rounds": args.rounds, "backing_store": result["backing"],
        "points_recorded": [result["outline_points"], result["polyline_points"]],
        "outline_us_per_point_median": round(statistics.median(result["outline_us"]), 1),
        "polyline_us_per_point_median": round(statistics.median(result["polyline_us"]), 1),
        "outline_us_per_point": [round(v, 1) for v in result["outline_us"]],
        "polyline_us_per_point": [round(v, 1) for v in result["polyline_us"]],
    }
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
