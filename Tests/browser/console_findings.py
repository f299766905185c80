"""The console's fixed findings (issue 21) and the pad-versus-server comparison, as checks mixed
into ConsoleTest (console_test.py), which provides js, check, require, wait_for, status, text, api,
pointer, collect_console, network_gets and out.
"""
import json
import math
import os
import random
import re
import signal
import subprocess
from urllib.parse import parse_qs, urlparse

from selenium.webdriver.support.ui import Select

import raster_compare

# The console's error colour (--bad in css/console.css) as getComputedStyle reports it.
ERROR_BORDER = "rgb(164, 22, 26)"
# The least PSNR (dB) between the pad's final pixels and the server's SVG rasterised by rsvg-convert.
MIN_PSNR_DB = 35.0


class FindingChecks:
    def looks_invalid(self, element_id):
        return self.js("return getComputedStyle(document.getElementById(arguments[0])).borderTopColor", element_id) == ERROR_BORDER

    def check_sign_first_and_blank(self):
        """"Sign in the box first." goes away with the first ink; a blank signature's error names its code once."""
        self.by_id("capture-upload").click()
        kind, text = self.wait_status("capture-status", "the request to sign first", done=("error",))
        self.check(text == "Sign in the box first.", f"uploading an empty pad asks for a signature: {text!r}")
        rect = self.js("const r = document.getElementById('capture-pad').getBoundingClientRect(); return [r.left, r.top, r.width, r.height];")
        left, top, width, height = rect
        self.pointer("mouse", [(round(left + width * 0.5), round(top + height * 0.5))])
        self.wait_for(lambda: "1 stroke(s)" in self.text("capture-pad-count"), "the dot to be recorded")
        kind, text = self.status("capture-status")
        self.check("Sign in the box first." not in text, f"the request to sign goes away once there is ink: {text!r}")
        self.by_id("capture-upload").click()
        kind, text = self.wait_status("capture-status", "the answer to a blank signature", done=("error", "ok"))
        self.collect_console(expected=lambda m: "/proof" in m and "422" in m)
        self.check(kind == "error" and "blank_signature" in text, f"a single dot is refused as blank_signature: {text!r}")
        self.check(text.count("blank_signature") <= 1, f"the blank-signature error names its code once: {text!r}")
        self.check(self.js("return document.getElementById('outbox').hidden"), "a refused upload does not wait in the outbox")
        self.by_id("capture-clear").click()
        self.wait_for(lambda: self.text("capture-pad-count") == "", "the pad to clear")

    def check_location_refused(self):
        """A refused location permission is explained in the console's words, not the browser's."""
        self.cdp("Browser.setPermission", {"origin": self.base, "permission": {"name": "geolocation"}, "setting": "denied"})
        self.by_id("capture-upload").click()
        kind, text = self.wait_status("capture-status", "the location refusal", done=("error",))
        self.check("permission was refused" in text and "User denied" not in text,
                   f"a refused location is explained in the console's words: {text!r}")
        self.cdp("Browser.grantPermissions", {"origin": self.base, "permissions": ["geolocation"]})

    def check_next_in_view(self):
        """On a phone, "Next signature" is on screen once the proof is shown (no scrolling)."""
        inside = self.js("""const r = document.getElementById('capture-next').getBoundingClientRect();
            return r.top >= 0 && r.bottom <= window.innerHeight && document.activeElement.id === 'capture-next';""")
        self.check(inside, "'Next signature' is on screen and focused once the proof is shown")

    def check_local_times(self, element_id, where):
        """Times read 2025-03-01 14:05:09 +01:00: the viewer's zone, the offset, no milliseconds."""
        text = self.text(element_id)
        self.check(re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d\d:\d\d", text) is not None,
                   f"{where}: times are shown in the viewer's zone with the offset")
        self.check(re.search(r"\d\d:\d\d:\d\d\.\d", text) is None and re.search(r"T\d\d:\d\d:\d\d(\.\d+)?Z", text) is None,
                   f"{where}: no raw UTC times or milliseconds: {re.findall(r'[0-9T:.Z+-]{19,}', text)[:3]}")

    def check_image_links(self, prefix):
        """The PNG opens in a new tab: a real link to the blob the page fetched with its key."""
        link = self.by_id(f"{prefix}-png-link")
        href = link.get_attribute("href") or ""
        self.check(href.startswith("blob:") and link.get_attribute("target") == "_blank",
                   f"the PNG is a link that opens in a new tab: {href!r}")
        if not href.startswith("blob:"):
            return
        console_window = self.driver.current_window_handle
        link.click()
        self.wait_for(lambda: len(self.driver.window_handles) == 2, "the PNG to open in a new tab")
        self.driver.switch_to.window([h for h in self.driver.window_handles if h != console_window][0])
        self.wait_for(lambda: self.js("return document.contentType") == "image/png", "the new tab to show the PNG")
        # Chrome's own image viewer styles itself inline; the blob: document inherits the console's
        # CSP (no inline style), so Chrome reports that and shows the image unstyled. Not ours.
        viewer_styles = lambda m: m.startswith("blob:") and "Applying inline style" in m
        self.collect_console(expected=viewer_styles)
        self.driver.close()
        self.driver.switch_to.window(console_window)
        self.collect_console(expected=viewer_styles)

    def check_search_parameters(self):
        """The text search and the flag go to GET /v1/deliveries as `q` and `flag`."""
        self.driver.get_log("performance")
        self.by_id("search-reference").clear()
        self.by_id("search-q").send_keys(self.reference[:12])
        Select(self.by_id("search-flag")).select_by_value("outside_geofence")
        self.by_id("search-submit").click()
        self.wait_for(lambda: self.status("search-status-text")[1] and self.status("search-status-text")[1] != "Searching…",
                      "the text and flag search to answer")
        urls = [u for u in self.network_gets("/v1/deliveries?") if "q=" in u]
        query = parse_qs(urlparse(urls[-1]).query) if urls else {}
        self.check(query.get("q") == [self.reference[:12]] and query.get("flag") == ["outside_geofence"],
                   f"the search sends q and flag: {urls[-1:] or 'no request'}")
        self.screenshot("dispatcher-search-text-flag")
        self.by_id("search-q").clear()
        Select(self.by_id("search-flag")).select_by_value("")

    def compare_pad_with_server(self, pad_png, ink):
        """The pad's final pixels against the server's SVG of the same points, rasterised by rsvg-convert
        at the pad's backing-store size; and the pad's outline path against the SVG's, number by number."""
        svg, _ = self.api("dispatcher", f"/v1/deliveries/{self.reference}/proof/signature.svg")
        svg_path = os.path.join(self.out, "server-signature.svg")
        with open(svg_path, "wb") as f:
            f.write(svg)
        width, height, pad_alpha = raster_compare.png_alpha(pad_png)
        size = re.search(rb'width="(\d+)" height="(\d+)"', svg)
        canvas = ink["canvas"]
        scale = int(size.group(1)) / canvas["width"]
        self.check(abs(int(size.group(2)) / canvas["height"] - scale) < 0.01,
                   f"the server's SVG maps the whole canvas at one scale ({size.group(0)} for {canvas})")
        raster = os.path.join(self.out, "server-signature.png")
        subprocess.run(["rsvg-convert", "-w", str(width), "-h", str(height), "-f", "png", "-o", raster, svg_path], check=True)
        with open(raster, "rb") as f:
            _, _, server_alpha = raster_compare.png_alpha(f.read())
        whole = raster_compare.psnr(pad_alpha, server_alpha, width)
        box = raster_compare.ink_box(pad_alpha, server_alpha, width)
        inked = raster_compare.psnr(pad_alpha, server_alpha, width, box)
        control = raster_compare.psnr(raster_compare.shifted(pad_alpha, width, 3), server_alpha, width, box)
        self.comparison = {"pad_pixels": [width, height], "server_svg": size.group(0).decode(), "psnr_db": round(whole, 2),
                           "psnr_ink_box_db": round(inked, 2), "ink_box": box, "control_shift_3px_psnr_ink_box_db": round(control, 2)}
        print(f"browser-test: pad vs server SVG: {json.dumps(self.comparison)}", flush=True)
        self.check(whole >= MIN_PSNR_DB, f"the pad's final outline matches the server's SVG: PSNR {whole:.1f} dB < {MIN_PSNR_DB} dB")
        self.check(inked >= MIN_PSNR_DB, f"… also within the ink's bounding box: PSNR {inked:.1f} dB < {MIN_PSNR_DB} dB")
        self.check(control < MIN_PSNR_DB, f"the comparison notices a 3-pixel shift (control PSNR {control:.1f} dB)")
        self.compare_path_data(svg, ink, scale)

    def reload_with_server_paused(self):
        """The server paused (SIGSTOP: connections are accepted and never answered): a reload still
        shows the console (sw.js serves its files) with the capture in the outbox; when the server
        goes on, the outbox sends it."""
        pid = int(os.environ.get("BROWSER_TEST_SERVER_PID") or 0)
        if not pid:
            print("browser-test: BROWSER_TEST_SERVER_PID unset: the reload without a server is skipped", flush=True)
            return
        self.wait_for(lambda: self.js("return navigator.serviceWorker.controller !== null"), "sw.js to control the console")
        os.kill(pid, signal.SIGSTOP)
        try:
            self.driver.refresh()
            self.wait_for(lambda: self.reference in self.text("outbox-list"), "the console and its outbox without a server", timeout=40)
            self.screenshot("capture-reload-server-paused-phone")
        finally:
            os.kill(pid, signal.SIGCONT)

    def compare_live_with_final(self, live_png, final_png):
        """What the pad showed while the last stroke was still being drawn (finalised shapes on the
        committed layer, the pending tail redrawn in a box per event) against the whole outline filled
        once at pointerup: the incremental drawing must already be the stored outline."""
        width, _, live = raster_compare.png_alpha(live_png)
        _, _, final = raster_compare.png_alpha(final_png)
        box = raster_compare.ink_box(live, final, width)
        value = raster_compare.psnr(live, final, width, box)
        self.live_vs_final_db = round(value, 2)
        print(f"browser-test: the pad while drawing vs after the stroke: PSNR {value:.2f} dB in the ink box", flush=True)
        self.check(value >= MIN_PSNR_DB, f"the live drawing is the final outline: PSNR {value:.1f} dB < {MIN_PSNR_DB} dB")

    def compare_generated_outlines(self, binary, count=40):
        """outline.js against `countersign render` on generated inks: strokes of 1 to 5 points (a dot, a
        line, a quadratic, a cubic, a first join), points closer than the 2-unit minimum, long fast
        strokes and slow wobbles, random but seeded, so a failure repeats."""
        chance = random.Random(21)
        inks, svgs = [], []
        folder = os.path.join(self.out, "outline-inks")
        os.makedirs(folder, exist_ok=True)
        for number in range(count):
            strokes, t = [], 0
            while sum(len(stroke) for stroke in strokes) < 12 or len(strokes) < 3:
                length = chance.choice([1, 2, 3, 4, 5, 6, 9, 17, 40])
                x, y = chance.uniform(10, 290), chance.uniform(10, 140)
                heading, stroke = chance.uniform(0, 2 * math.pi), []
                for _ in range(length):
                    stroke.append([round(x, 1), round(y, 1), t])
                    step = chance.choice([0.5, 1.5, 3, 8, 25, 60])
                    heading += chance.uniform(-1.2, 1.2)
                    x = min(300, max(0, x + step * math.cos(heading)))
                    y = min(150, max(0, y + step * math.sin(heading)))
                    t += chance.randint(0, 16)
                strokes.append(stroke)
            ink = {"format": "countersign.ink/v1", "canvas": {"width": 300, "height": 150}, "strokes": strokes}
            source = os.path.join(folder, f"ink-{number:02d}.json")
            with open(source, "w") as f:
                json.dump(ink, f)
            rendered = subprocess.run([binary, "render", source, "-o", source[:-5] + ".svg"], capture_output=True, text=True)
            if rendered.returncode != 0:
                self.check(False, f"countersign render refused generated ink {number}: {rendered.stderr.strip()}")
                continue
            with open(source[:-5] + ".svg", "rb") as f:
                inks.append(ink)
                svgs.append(f.read())
        worst = 0.0
        for number, (ink, svg) in enumerate(zip(inks, svgs)):
            worst = max(worst, self.compare_path_data(svg, ink, 2, f"generated ink {number}"))
        self.outline_check = {"inks": len(inks), "points": sum(len(s) for ink in inks for s in ink["strokes"]),
                              "largest_difference_px": round(worst, 4)}
        print(f"browser-test: outline.js vs countersign render: {json.dumps(self.outline_check)}", flush=True)

    def compare_path_data(self, svg, ink, scale, what="the signature"):
        """The page's outline.js and the server's reconstruction give the same numbers (to the SVG's 0.01 px)."""
        script = """const [strokes, scale, done] = arguments;
            import('/js/outline.js').then((m) => done(m.pathData(m.outlineOfStrokes(strokes).map((e) =>
              [e[0], ...e.slice(1).map((v) => v * scale)]))), (e) => done('error: ' + e));"""
        ours = self.driver.execute_async_script(script, ink["strokes"], scale)
        theirs = re.search(rb' d="([^"]*)"', svg).group(1).decode()
        commands = lambda d: re.findall(r"[MLQCZ]", d)
        numbers = lambda d: [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", d)]
        a, b = numbers(ours), numbers(theirs)
        worst = max((abs(x - y) for x, y in zip(a, b)), default=0)
        self.check(commands(ours) == commands(theirs) and len(a) == len(b) and worst <= 0.011,
                   f"outline.js gives the server's path for {what}: {len(commands(ours))} vs {len(commands(theirs))} commands, "
                   f"{len(a)} vs {len(b)} numbers, largest difference {worst:.3f} px")
        return worst
