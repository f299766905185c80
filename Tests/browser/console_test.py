#!/usr/bin/python3
"""The web console in a real browser: Debian's chromium, headless, driven by chromedriver (Selenium).

Run by scripts/browser-test.sh against a live server on a fresh database, with three API keys in
the environment (CONSOLE_TEST_COURIER_KEY, CONSOLE_TEST_DISPATCHER_KEY, CONSOLE_TEST_AUDITOR_KEY):

1. dispatcher: signs in, creates a delivery;
2. courier, on an emulated phone (390x844, devicePixelRatio 3, touch, Europe/Berlin, GPS):
   records a failed attempt (nobody home) through the capture view's form, then
   draws a signature with synthesised pen, touch and mouse pointer events, uploads it once while
   the network is down (the pad must retry with the same Idempotency-Key) and sees the PNG and SVG
   the server rendered; the bytes the page sent (seen by the page and by Chrome's network log)
   must equal GET .../proof/points byte for byte;
3. dispatcher: finds the delivery, sees its signature, signer, times, distance and flags, the
   OpenStreetMap link, downloads the original points (equal to the upload);
4. auditor: pages through the audit events, verifies the chains, sees the signed checkpoint of their heads,
   downloads exports (NDJSON naming the delivery, a valid ZIP), then opens the delivery's
   printable receipt and prints it to PDF on A4 and on Letter: one page each.

Every view is saved as a screenshot under --out. Any browser console error (JavaScript error,
console.error, failed request, CSP violation) fails the test, except the network errors of the
deliberate offline upload, which must occur.
"""
import argparse
import base64
import hashlib
import json
import os
import re
import sys
import time
import traceback
import urllib.error
import urllib.request
import zipfile

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from console_findings import FindingChecks

# Berlin: a non-UTC offset, so the captured_at offset the pad sends is really checked.
TIMEZONE = "Europe/Berlin"
DESTINATION = (52.520008, 13.404954)
SIGNING_SPOT = (52.520408, 13.405254)   # about 50 m from the destination


class TestFailure(Exception):
    pass


class CaseInsensitive(dict):
    """HTTP headers as Chrome reports them, read without regard to the case of their names."""
    def get(self, name, default=None):
        for key, value in self.items():
            if key.lower() == name.lower():
                return value
        return default


class ConsoleTest(FindingChecks):
    def __init__(self, args):
        self.base = args.base_url.rstrip("/")
        self.binary = args.binary
        self.out = args.out
        self.downloads = os.path.join(self.out, "downloads")
        os.makedirs(self.downloads, exist_ok=True)
        self.keys = {role: os.environ[f"CONSOLE_TEST_{role.upper()}_KEY"] for role in ("courier", "dispatcher", "auditor", "admin")}
        self.reference = "BRW-" + time.strftime("%Y%m%d%H%M%S") + "-" + os.urandom(2).hex()
        self.failures = []
        self.console_errors = []
        self.steps = []
        self.shot_number = 0
        options = Options()
        options.binary_location = args.chromium
        for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=1280,1000", "--no-first-run", "--no-default-browser-check",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--password-store=basic", "--lang=en-GB"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
        self.driver = webdriver.Chrome(service=Service(args.chromedriver), options=options)
        self.driver.set_page_load_timeout(30)
        self.cdp("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": os.path.abspath(self.downloads)})
        self.cdp("Network.enable", {})

    # ----- plumbing -------------------------------------------------------------------------

    def cdp(self, command, params=None):
        return self.driver.execute_cdp_cmd(command, params or {})

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    # GET …/legal-hold answers 404 while a delivery is not held, which Chrome logs as a failed
    # load: the data protection panel of every delivery an auditor or admin opens reads it so,
    # and collect_console always allows it.
    @staticmethod
    def not_held(message):
        return "/legal-hold" in message and "404" in message

    def step(self, name):
        self.collect_console(expected=None)
        self.steps.append((name, time.monotonic()))
        print(f"browser-test: {name}", flush=True)

    def check(self, condition, message):
        """A failed check is recorded and the run goes on, so one run reports every problem."""
        if not condition:
            self.failures.append(f"[{self.steps[-1][0] if self.steps else 'setup'}] {message}")
            print(f"browser-test: FAIL: {message}", flush=True)
        return condition

    def require(self, condition, message):
        if not condition:
            raise TestFailure(message)

    def wait_for(self, predicate, what, timeout=20.0):
        deadline = time.monotonic() + timeout
        last_error = None
        while time.monotonic() < deadline:
            try:
                value = predicate()
                if value:
                    return value
            except WebDriverException as error:
                last_error = error
            time.sleep(0.1)
        raise TestFailure(f"timed out after {timeout:.0f} s waiting for {what}" + (f" ({last_error.msg})" if last_error else ""))

    def by_id(self, element_id):
        return self.driver.find_element(By.ID, element_id)

    def text(self, element_id):
        return self.js("return document.getElementById(arguments[0]).textContent", element_id) or ""

    def status(self, element_id):
        """(kind, text) of a status line: kind is 'ok', 'error' or 'info'."""
        return self.js("""const e = document.getElementById(arguments[0]);
            return [e.classList.contains('ok') ? 'ok' : e.classList.contains('error') ? 'error' : 'info', e.textContent];""", element_id)

    def wait_status(self, element_id, what, timeout=20.0, done=("ok", "error")):
        kind, text = self.wait_for(lambda: (lambda s: s if s[0] in done and s[1] else None)(self.status(element_id)), what, timeout)
        return kind, text

    def screenshot(self, name):
        self.shot_number += 1
        shot = self.cdp("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
        path = os.path.join(self.out, f"{self.shot_number:02d}-{name}.png")
        with open(path, "wb") as f:
            f.write(base64.b64decode(shot["data"]))

    def collect_console(self, expected):
        """Moves the browser log into self.console_errors; `expected(message)` marks allowed errors."""
        allowed = []
        for entry in self.driver.get_log("browser"):
            if entry.get("level") != "SEVERE":
                continue
            message = entry.get("message", "")
            if self.not_held(message) or (expected and expected(message)):
                allowed.append(message)
            else:
                self.console_errors.append(f"[{self.steps[-1][0] if self.steps else 'setup'}] {message}")
        return allowed

    def network_posts(self, url_suffix):
        """(body, headers) of the POSTs Chrome recorded to URLs ending in url_suffix (the performance log);
        header names as the page wrote them, looked up without regard to case."""
        bodies = []
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message.get("method") != "Network.requestWillBeSent":
                continue
            request = message["params"]["request"]
            if request.get("method") != "POST" or not request.get("url", "").endswith(url_suffix):
                continue
            headers = CaseInsensitive(request.get("headers", {}))
            entries = request.get("postDataEntries")
            if entries:
                bodies.append((b"".join(base64.b64decode(part.get("bytes", "")) for part in entries), headers))
            elif "postData" in request:
                bodies.append((request["postData"].encode("utf-8"), headers))
        return bodies

    def network_gets(self, url_part):
        """URLs of the GETs Chrome recorded that contain url_part (the performance log)."""
        urls = []
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message.get("method") == "Network.requestWillBeSent":
                request = message["params"]["request"]
                if request.get("method") == "GET" and url_part in request.get("url", ""):
                    urls.append(request["url"])
        return urls

    def pad_png(self):
        return base64.b64decode(self.js("return document.getElementById('capture-pad').toDataURL('image/png').split(',')[1]"))

    def api(self, role, path):
        request = urllib.request.Request(self.base + path, headers={"Authorization": f"Bearer {self.keys[role]}"})
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.read(), response.headers

    def api_send(self, role, method, path, body):
        request = urllib.request.Request(self.base + path, method=method, data=json.dumps(body).encode(),
                                         headers={"Authorization": f"Bearer {self.keys[role]}", "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=20) as response:
            return json.loads(response.read())

    def wait_download(self, predicate, what, timeout=30.0):
        def ready():
            names = [n for n in os.listdir(self.downloads) if not n.endswith(".crdownload") and predicate(n)]
            return names[0] if names else None
        name = self.wait_for(ready, what, timeout)
        path = os.path.join(self.downloads, name)
        time.sleep(0.2)
        with open(path, "rb") as f:
            return name, f.read()

    def image_loaded(self, element_id):
        return self.js("const i = document.getElementById(arguments[0]); return i.complete && i.naturalWidth > 0 && i.src.startsWith('blob:');",
                       element_id)

    def no_horizontal_overflow(self, what):
        width = self.js("return [document.documentElement.scrollWidth, window.innerWidth]")
        self.check(width[0] <= width[1], f"{what}: the page is wider than the screen ({width[0]} > {width[1]} px)")

    def phone(self, on):
        if on:
            self.cdp("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 3, "mobile": True})
            self.cdp("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5})
        else:
            self.cdp("Emulation.clearDeviceMetricsOverride")
            self.cdp("Emulation.setTouchEmulationEnabled", {"enabled": False})

    # ----- console actions ------------------------------------------------------------------

    def sign_in(self, role):
        self.driver.get(self.base + "/")
        self.wait_for(lambda: self.js("return !document.getElementById('view-signin').hidden || !document.getElementById('who').hidden"),
                      "the console to start")
        if not self.by_id("who").get_attribute("hidden"):
            self.by_id("sign-out").click()
            self.wait_for(lambda: self.js("return !document.getElementById('view-signin').hidden"), "the sign-in form after signing out")
        self.by_id("signin-key").send_keys(self.keys[role])
        self.by_id("signin-submit").click()
        self.wait_for(lambda: self.js("return !document.getElementById('who').hidden") or self.status("app-status")[0] == "error",
                      f"signing in as {role}")
        kind, text = self.status("app-status")
        self.require(kind != "error", f"signing in as {role} failed: {text}")
        self.require(self.role_shown() == f"Signed in: {role}", f"the header shows {self.role_shown()!r} after signing in as {role}")

    def role_shown(self):
        return self.text("who-role")

    def nav_views(self):
        return self.js("return Array.from(document.querySelectorAll('#nav a')).map(a => a.getAttribute('href'))")

    def pointer(self, kind, points, pressure=None, before_release=None):
        """One stroke through viewport points [(x, y)], as pen, touch or mouse input events;
        before_release() runs after the last move, while the pointer is still down."""
        if kind == "touch":
            def touch(event_type, x, y, force):
                self.cdp("Input.dispatchTouchEvent", {"type": event_type, "touchPoints": [] if event_type == "touchEnd" else
                                                      [{"x": x, "y": y, "id": 1, "force": force, "radiusX": 4, "radiusY": 4}]})
            for index, (x, y) in enumerate(points):
                touch("touchStart" if index == 0 else "touchMove", x, y, pressure(index) if pressure else 1)
                time.sleep(0.004)
            if before_release:
                before_release()
            touch("touchEnd", *points[-1], 0)
            return
        base = {"pointerType": kind, "button": "left"}
        for index, (x, y) in enumerate(points):
            event = dict(base, x=x, y=y, buttons=1, type="mousePressed" if index == 0 else "mouseMoved")
            if index == 0:
                event["clickCount"] = 1
            if pressure:
                event["force"] = pressure(index)
            self.cdp("Input.dispatchMouseEvent", event)
            time.sleep(0.004)
        if before_release:
            before_release()
        self.cdp("Input.dispatchMouseEvent", dict(base, x=points[-1][0], y=points[-1][1], buttons=0, clickCount=1, type="mouseReleased"))

    # ----- the scenario ---------------------------------------------------------------------

    def run(self):
        d = self.driver
        self.step("dispatcher creates a delivery")
        d.get(self.base + "/")
        self.wait_for(lambda: self.js("return !document.getElementById('view-signin').hidden"), "the sign-in form")
        self.check(self.js("return document.activeElement && document.activeElement.id") == "signin-key",
                   "the API key field has the focus on the sign-in page")
        self.screenshot("sign-in")
        self.check_labels("sign-in")
        self.check(not self.looks_invalid("signin-key"), "the empty, untouched API key field is not red on load")
        self.by_id("signin-key").send_keys("cs_not-a-key-" + os.urandom(8).hex())
        self.by_id("signin-submit").click()
        kind, text = self.wait_status("app-status", "the answer to a wrong key")
        self.check(kind == "error" and "not accepted" in text and "Sign out" not in text,
                   f"a wrong key on the sign-in page says it was not accepted (not 'sign out'): {text!r}")
        self.collect_console(expected=lambda m: "/v1/session" in m and "401" in m)
        self.by_id("signin-key").clear()
        self.sign_in("dispatcher")
        self.check(self.nav_views() == ["#dispatcher", "#capture"], f"dispatcher views: {self.nav_views()}")
        self.js("document.getElementById('create-panel').open = true")
        self.by_id("create-reference").send_keys(self.reference)
        self.by_id("create-recipient").send_keys("Ada Lovelace")
        self.by_id("create-address").send_keys("Alexanderplatz 1, Berlin")
        self.by_id("create-lat").send_keys(str(DESTINATION[0]))
        self.by_id("create-lon").send_keys(str(DESTINATION[1]))
        self.by_id("create-submit").click()
        kind, text = self.wait_status("create-status", "the delivery to be created")
        self.require(kind == "ok", f"creating the delivery failed: {text}")
        self.wait_for(lambda: self.reference in self.text("detail-title") and "pending" in self.text("detail-details"),
                      "the new delivery to open")
        self.check_labels("dispatcher")
        self.screenshot("dispatcher-created")

        self.step("courier signs on a phone")
        self.phone(True)
        self.cdp("Emulation.setTimezoneOverride", {"timezoneId": TIMEZONE})
        self.cdp("Browser.grantPermissions", {"origin": self.base, "permissions": ["geolocation"]})
        self.cdp("Emulation.setGeolocationOverride", {"latitude": SIGNING_SPOT[0], "longitude": SIGNING_SPOT[1], "accuracy": 12})
        self.sign_in("courier")
        self.check(self.nav_views() == ["#capture"], f"courier views: {self.nav_views()}")
        self.wait_for(lambda: self.js("return Array.from(document.querySelectorAll('#capture-references option')).some(o => o.value === arguments[0])",
                                      self.reference), "the pending delivery among the reference suggestions")
        self.check(not self.looks_invalid("capture-reference") and not self.looks_invalid("capture-signer"),
                   "the empty required capture fields are not red on load")
        self.record_attempt()
        self.by_id("capture-reference").send_keys(self.reference)
        self.by_id("capture-signer").send_keys("Zoë Ångström-Lovelace")
        self.js("document.getElementById('capture-pad').scrollIntoView({block: 'center'})")
        self.check_sign_first_and_blank()
        rect = self.js("const r = document.getElementById('capture-pad').getBoundingClientRect();"
                       "return {left: r.left, top: r.top, width: r.width, height: r.height, ratio: devicePixelRatio,"
                       " backing: document.getElementById('capture-pad').width};")
        self.check(rect["ratio"] == 3 and rect["backing"] == round(rect["width"] * 3),
                   f"the pad's backing store follows devicePixelRatio 3: {rect}")
        left, top, w, h = rect["left"], rect["top"], rect["width"], rect["height"]
        import math
        # 1: a pen loop with changing pressure; 2: a touch stroke; 3: a mouse underline.
        pen = [(round(left + w * (0.1 + 0.35 * i / 59)), round(top + h * (0.5 - 0.3 * math.sin(i / 59 * 2 * math.pi))))
               for i in range(60)]
        self.pointer("pen", pen, pressure=lambda i: round(0.2 + 0.6 * i / 59, 3))
        touch = [(round(left + w * (0.5 + 0.3 * i / 29)), round(top + h * (0.3 + 0.4 * (i % 10) / 9))) for i in range(30)]
        self.pointer("touch", touch)
        line = [(round(left + w * (0.1 + 0.8 * i / 19)), round(top + h * 0.85)) for i in range(20)]
        live = []
        self.pointer("mouse", line, before_release=lambda: live.append(self.pad_png()))
        self.wait_for(lambda: "3 stroke(s)" in self.text("capture-pad-count"), "the pad to count 3 strokes")
        self.by_id("capture-location").click()
        self.check_labels("capture")
        self.screenshot("capture-drawn-phone")
        self.no_horizontal_overflow("capture on a phone")
        pad_png = self.pad_png()
        self.compare_live_with_final(live[0], pad_png)
        self.check_location_refused()

        self.step("courier captures while the server is unreachable, reloads, and the outbox sends it")
        proof_route = f"*/v1/deliveries/{self.reference}/proof"
        self.cdp("Network.setBlockedURLs", {"urls": [proof_route]})
        self.driver.get_log("performance")
        self.by_id("capture-upload").click()
        self.wait_for(lambda: "Saved on this device" in self.status("capture-status")[1] or self.status("capture-status")[0] == "error",
                      "the capture to be kept on the device")
        kind, text = self.status("capture-status")
        self.require("Saved on this device" in text, f"the unreachable upload was not kept: {text}")
        first_key = self.js("return window.countersignLastUpload.idempotencyKey")
        sent = self.js("return window.countersignLastUpload.body").encode("utf-8")
        self.wait_for(lambda: self.reference in self.text("outbox-list"), "the outbox to list the capture")
        self.check("Last error" in self.text("outbox-list") and "Waiting to be sent (1)" in self.text("outbox-title"),
                   f"the outbox shows what waits and its last error: {self.text('outbox-title')} / {self.text('outbox-list')}")
        self.check(self.js("return document.getElementById('capture-reference').value === ''"), "the form is free for the next signature")
        self.screenshot("capture-queued-phone")
        attempts = lambda: int((re.search(r"(\d+) attempt", self.text("outbox-list")) or [0, 0])[1])
        before_reload = attempts()
        self.driver.refresh()
        self.wait_for(lambda: self.reference in self.text("outbox-list") and attempts() > before_reload,
                      "the outbox, after a reload, to list the capture again and try it once more")
        self.screenshot("capture-queued-after-reload-phone")
        self.cdp("Network.setBlockedURLs", {"urls": []})
        self.reload_with_server_paused()
        self.wait_for(lambda: self.js("return document.getElementById('outbox').hidden") and self.reference in self.text("outbox-sent"),
                      "the outbox to send the capture once the server is reachable", timeout=45)
        # Blocked attempts fail; when the paused server goes on, two attempts with the one key may
        # arrive together (the reloaded page's, held while paused, and a retry): the second is 409
        # idempotency_key_in_flight and is retried. The proof count below shows it stayed one.
        self.collect_console(expected=lambda m: "/proof" in m and ("ERR_BLOCKED_BY_CLIENT" in m or "Failed to fetch" in m or "409" in m))
        self.wait_for(lambda: self.status("capture-status")[1].startswith(("Stored", "Already stored")),
                      "the stored proof to be shown on the empty pad")
        posted = self.network_posts(f"/v1/deliveries/{self.reference}/proof")
        self.check(len(posted) >= 3, f"Chrome saw at least three POSTs of the proof (blocked, blocked after the reload, sent): {len(posted)}")
        self.check(all(body == sent for body, _ in posted), "every POST Chrome sent carried exactly the bytes captured before the reload")
        keys = {headers.get("Idempotency-Key") for _, headers in posted}
        self.check(keys == {first_key}, f"every POST carried the Idempotency-Key made at capture time: {keys} vs {first_key}")
        recorded = json.loads(self.api("auditor", f"/v1/audit/events?subject=delivery:{self.reference}&action=proof_recorded&limit=50")[0])
        self.check(len(recorded["items"]) == 1, f"exactly one proof was stored: {len(recorded['items'])} proof_recorded events")
        self.check_ink(json.loads(sent), rect, pen, touch, line)
        stored, headers = self.api("auditor", f"/v1/deliveries/{self.reference}/proof/points")
        self.check(stored == sent, f"GET …/proof/points equals the uploaded bytes ({len(stored)} vs {len(sent)} bytes)")
        try:
            self.api("dispatcher", f"/v1/deliveries/{self.reference}/proof/points")
            self.check(False, "a dispatcher's key reads the raw points: only auditors and admins may (read_points)")
        except urllib.error.HTTPError as refused:
            self.check(refused.code == 403, f"a dispatcher's key gets 403 for the raw points, not {refused.code}")
        self.check(hashlib.sha256(sent).hexdigest() in self.text("capture-details"), "the page shows the SHA-256 of the bytes it sent")
        self.check("matches what this device sent" in self.text("capture-details"), "the page confirmed the server's digest")
        shown = lambda: self.image_loaded("capture-png") and self.image_loaded("capture-svg")
        self.wait_for(lambda: shown() or self.status("capture-status")[0] == "error", "the rendered PNG and SVG (or an error)")
        if not shown():
            kind, text = self.status("capture-status")
            self.check(False, "the courier does not see the PNG the server rendered"
                       + (" because GET …/proof/signature.png and .svg answer 403 to a courier key: the server must let a courier"
                          " read back the PNG/SVG of a proof its own key uploaded (see docs/console.md)" if "may upload proofs but not read" in text
                          else f": {text}"))
        self.check_next_in_view()
        self.check_local_times("capture-details", "the courier's result")
        self.compare_pad_with_server(pad_png, json.loads(sent)["ink"])
        self.compare_generated_outlines(self.binary)
        self.screenshot("capture-uploaded-phone")
        self.no_horizontal_overflow("capture result on a phone")
        self.phone(False)

        self.step("dispatcher finds the delivery and its signature")
        self.sign_in("dispatcher")
        self.by_id("search-reference").send_keys(self.reference)
        self.by_id("search-submit").click()
        self.wait_for(lambda: self.image_loaded("detail-png") and self.image_loaded("detail-svg"),
                      "the signature PNG and SVG of the delivery")
        details = self.text("detail-details")
        for expected in ("Zoë Ångström-Lovelace", "delivered", "Distance to destination", hashlib.sha256(sent).hexdigest()):
            self.check(expected in details, f"the delivery details show {expected!r}")
        self.check(re.search(r"\d\d:\d\d:\d\d \+0[12]:00", details) is not None,
                   "the capture time is shown in the viewer's zone (Berlin) with its offset")
        self.check_local_times("detail-details", "the delivery details")
        self.check_image_links("detail")
        attempts = self.text("detail-attempts")
        self.check(not self.by_id("detail-attempts").get_attribute("hidden") and "Recipient not there" in attempts
                   and "Nobody home" in attempts, f"the delivery lists its failed attempt: {attempts!r}")
        href = self.by_id("detail-map").get_attribute("href")
        self.check(href.startswith("https://www.openstreetmap.org/?mlat=52.520408&mlon=13.405254"), f"OpenStreetMap link: {href}")
        self.check(self.by_id("detail-map").get_attribute("rel") == "noopener noreferrer", "the map link opens without an opener")
        self.screenshot("dispatcher-delivery")
        self.check(self.by_id("detail-points-access").get_attribute("hidden") is not None,
                   "a dispatcher is offered no download of the raw points (auditors and admins only)")
        self.check_search_parameters()
        self.by_id("search-reference").clear()
        Select(self.by_id("search-status")).select_by_value("delivered")
        self.by_id("search-submit").click()
        self.wait_for(lambda: self.reference in self.text("search-results") and "shown" in self.status("search-status-text")[1],
                      "the delivered list to include the delivery")
        self.screenshot("dispatcher-search")
        self.phone(True)
        self.no_horizontal_overflow("deliveries on a phone")
        self.screenshot("dispatcher-phone")
        self.phone(False)

        self.step("auditor: events, verification, checkpoint, export")
        self.sign_in("auditor")
        self.check(self.nav_views() == ["#auditor", "#dispatcher"], f"auditor views: {self.nav_views()}")
        self.wait_status("events-status", "the first page of events", done=("info", "ok", "error"))
        self.wait_for(lambda: "Page 1" in self.status("events-status")[1] or self.status("events-status")[0] == "error", "events")
        Select(self.by_id("events-limit")).select_by_visible_text("5")
        self.by_id("events-submit").click()
        self.wait_for(lambda: "Page 1: events 1 to 5." in self.status("events-status")[1], "page 1 of 5 events")
        self.by_id("events-next").click()
        self.wait_for(lambda: "Page 2: events 6 to" in self.status("events-status")[1], "page 2 of the events")
        self.check(self.js("return !document.getElementById('events-previous').disabled"), "page 2 offers the previous page")
        self.by_id("events-previous").click()
        self.wait_for(lambda: "Page 1: events 1 to 5." in self.status("events-status")[1], "back to page 1")
        Select(self.by_id("events-limit")).select_by_visible_text("50")
        self.by_id("events-subject").send_keys(f"delivery:{self.reference}")
        self.by_id("events-submit").click()
        self.wait_for(lambda: "proof_points_read" in self.text("events-table") and "Page 1" in self.status("events-status")[1],
                      "the delivery's events")
        events = self.text("events-table")
        self.check_local_times("events-table", "the audit events")
        for action in ("delivery_created", "proof_recorded", "proof_png_read", "proof_svg_read", "proof_points_read"):
            self.check(action in events, f"the audit events of the delivery include {action}")
        self.by_id("verify-run").click()
        kind, text = self.wait_status("verify-status", "the chain verification", timeout=60)
        self.check(kind == "ok" and "Chains intact" in text and "in 16 chains" in text, f"verify chains: {text}")
        self.check("chain " in self.text("verify-details"), "the verification lists the chain heads")
        kind, text = self.wait_status("checkpoint-status", "the signed checkpoint", done=("ok", "error", "info"))
        self.wait_for(lambda: self.text("checkpoint-details") or self.status("checkpoint-status")[0] == "error", "the checkpoint")
        kind, text = self.status("checkpoint-status")
        if kind == "error":
            self.check(False, f"GET /v1/audit/checkpoint failed in the console: {text}"
                       + (" — the checkpoint endpoint is missing on this server" if "404" in text else ""))
            self.collect_console(expected=lambda m: "/v1/audit/checkpoint" in m and "404" in m)
        else:
            self.check("Ed25519" in self.text("checkpoint-details") and re.search(r"[0-9a-f]{128}", self.text("checkpoint-details")),
                       "the checkpoint shows an Ed25519 signature")
            self.check(re.search(r"chain \d+: event \d+", self.text("checkpoint-details")), "the checkpoint lists the signed chain heads")
            # Nothing was appended between loading the checkpoint and verifying: every chain's head matches.
            self.wait_for(lambda: "heads match" in self.status("checkpoint-status")[1], "the checkpoint compared with the verified chains")
            kind, text = self.status("checkpoint-status")
            self.check(kind == "ok" and "all 16 heads match" in text, f"checkpoint vs verification: {text}")
        self.export("ndjson", lambda data: self.check(self.reference.encode() in data, "the NDJSON export names the delivery"))
        self.export("zip", lambda data: self.check(data[:2] == b"PK", "the ZIP export is a zip archive"))
        self.check_labels("auditor")
        self.screenshot("auditor")
        self.phone(True)
        self.no_horizontal_overflow("auditor on a phone")
        self.screenshot("auditor-phone")
        self.phone(False)

        self.step("auditor opens the printable receipt")
        self.by_id("nav-dispatcher").click()
        self.wait_for(lambda: self.js("return !document.getElementById('view-dispatcher').hidden"), "the deliveries view")
        self.check(self.js("return document.getElementById('create-panel').hidden"), "an auditor is not offered to create deliveries")
        self.by_id("search-reference").send_keys(self.reference)
        self.by_id("search-submit").click()
        self.wait_for(lambda: self.image_loaded("detail-png") and not self.by_id("detail-receipt").get_attribute("hidden"),
                      "the delivery with its receipt link")
        self.check(self.by_id("detail-points-access").get_attribute("hidden") is None, "an auditor is offered the raw points")
        self.by_id("detail-points-reason").send_keys("Dispute 4711")
        self.by_id("detail-points").click()
        name, data = self.wait_download(lambda n: n.startswith(self.reference), "the original points download")
        self.check(data == sent, f"the downloaded points ({name}) equal the uploaded bytes")
        read = json.loads(self.api("auditor", f"/v1/audit/events?subject=delivery:{self.reference}&action=proof_points_read&limit=50")[0])
        self.check(any(event.get("details", {}).get("reason") == "Dispute 4711" for event in read["items"]),
                   "the console's read of the points is audited with the reason typed")
        console_window = self.driver.current_window_handle
        self.by_id("detail-receipt").click()
        self.wait_for(lambda: len(self.driver.window_handles) == 2, "the receipt to open in a new tab")
        self.driver.switch_to.window([h for h in self.driver.window_handles if h != console_window][0])
        self.wait_for(lambda: self.js("return document.body.dataset.ready === 'true'")
                      or "Sign in" in self.text("receipt-status"), "the receipt to load in its new tab")
        self.require(self.js("return document.body.dataset.ready === 'true'"),
                     f"the receipt in a new tab has no key: {self.text('receipt-status')}")
        self.check_local_times("receipt", "the receipt")
        receipt = self.text("receipt")
        for expected in (self.reference, "Ada Lovelace", "Zoë Ångström-Lovelace", hashlib.sha256(sent).hexdigest(), "Distance"):
            self.check(expected in receipt, f"the receipt shows {expected!r}")
        self.check(self.image_loaded("receipt-signature"), "the receipt shows the signature")
        self.check("Recipient not there" in self.text("receipt-attempts"), "the receipt lists the failed attempt before delivery")
        self.screenshot("receipt")
        self.cdp("Emulation.setEmulatedMedia", {"media": "print"})
        self.check(self.js("return getComputedStyle(document.querySelector('.toolbar')).display") == "none",
                   "the print stylesheet hides the toolbar")
        self.screenshot("receipt-print-media")
        self.cdp("Emulation.setEmulatedMedia", {"media": ""})
        for paper, (width, height) in {"a4": (8.27, 11.69), "letter": (8.5, 11.0)}.items():
            pdf = base64.b64decode(self.cdp("Page.printToPDF", {"paperWidth": width, "paperHeight": height, "printBackground": True})["data"])
            with open(os.path.join(self.out, f"receipt-{paper}.pdf"), "wb") as f:
                f.write(pdf)
            pages = len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", pdf))
            self.check(pages == 1, f"the receipt prints on one {paper} page (got {pages})")
        self.phone(True)
        self.driver.refresh()
        self.wait_for(lambda: self.js("return document.body.dataset.ready === 'true'"), "the receipt to load on a phone")
        self.no_horizontal_overflow("receipt on a phone")
        self.screenshot("receipt-phone")
        self.phone(False)

        self.step("auditor opens an erased delivery")
        erased = self.reference + "-E"
        self.api_send("dispatcher", "POST", "/v1/deliveries",
                      {"reference": erased, "recipient": {"name": "Erin Erasable"}, "address": "3 Gone Street"})
        self.api_send("dispatcher", "POST", f"/v1/deliveries/{erased}/cancel", {"reason": "customer moved"})
        self.api_send("admin", "POST", f"/v1/deliveries/{erased}/erase", {"reason": "DSR-42"})
        self.driver.switch_to.window(console_window)
        self.by_id("search-reference").clear()
        self.by_id("search-reference").send_keys(erased)
        self.by_id("search-submit").click()
        self.wait_for(lambda: "erased" in self.status("detail-status")[1], "the erased delivery's notice")
        details = self.text("detail-details")
        self.check("Erased at" in details and "Erin" not in details and "Gone Street" not in details and "customer moved" not in details,
                   f"the details say when it was erased and show none of its personal data: {details!r}")
        self.check(self.by_id("detail-receipt").get_attribute("hidden") is not None, "no receipt is offered for an erased delivery")
        self.screenshot("auditor-erased-delivery")

        self.step("admin holds a delivery, clears the hold and erases it from the console")
        guarded = self.reference + "-H"
        self.api_send("dispatcher", "POST", "/v1/deliveries",
                      {"reference": guarded, "recipient": {"name": "Hugo Heldback"}, "address": "9 Claim Road"})
        self.api_send("dispatcher", "POST", f"/v1/deliveries/{guarded}/cancel", {"reason": "refused at the door"})
        self.sign_in("admin")
        self.by_id("search-reference").clear()
        self.by_id("search-reference").send_keys(guarded)
        self.by_id("search-submit").click()
        self.wait_for(lambda: self.text("protection-status").startswith("No legal hold"), "the data protection panel")
        self.check(self.by_id("protection-erase").get_attribute("hidden") is None, "an admin is offered erasure of a closed delivery")
        self.by_id("protection-hold-set").click()
        self.wait_for(lambda: "Give a reason" in self.text("protection-status"), "a hold without a reason is asked for one")
        self.by_id("protection-reason").send_keys("Claim 7")
        self.by_id("protection-hold-set").click()
        self.wait_for(lambda: "Under a legal hold" in self.text("protection-status"), "the hold to show")
        self.check("Claim 7" in self.text("protection-status"), "the hold's reason is shown")
        self.check(self.by_id("protection-erase").get_attribute("hidden") is not None, "no erasure is offered under a hold")
        self.check_labels("data protection panel")
        self.screenshot("admin-legal-hold")
        self.by_id("protection-hold-clear").click()
        self.wait_for(lambda: self.text("protection-status").startswith("No legal hold"), "the hold to be cleared")
        self.by_id("protection-reason").send_keys("DSR-43")
        self.by_id("protection-erase").click()
        self.wait_for(lambda: self.by_id("protection-erase-confirm").get_attribute("hidden") is None, "the erasure's confirmation")
        self.screenshot("admin-erase-confirm")
        self.by_id("protection-erase-yes").click()
        self.wait_for(lambda: "erased" in self.status("detail-status")[1], "the delivery shown erased")
        details = self.text("detail-details")
        self.check("Erased at" in details and "Hugo" not in details and "Claim Road" not in details,
                   f"the erased delivery shows none of its personal data: {details!r}")
        self.check(self.by_id("protection").get_attribute("hidden") is not None, "nothing is left to hold or erase")
        events = json.loads(self.api("auditor", f"/v1/audit/events?subject=delivery:{guarded}")[0])
        actions = [item["action"] for item in events["items"]]
        self.check(all(a in actions for a in ("legal_hold_set", "legal_hold_cleared", "delivery_erased")),
                   f"the hold, its clearing and the erasure are audit events: {actions}")

        self.step("done")

    def export(self, format_name, check_content):
        Select(self.by_id("export-format")).select_by_value(format_name)
        before = set(os.listdir(self.downloads))
        self.by_id("export-submit").click()
        kind, text = self.wait_status("export-status", f"the {format_name} export", timeout=60)
        if kind != "ok":
            self.check(False, f"the {format_name} export failed: {text}"
                       + (" — GET /v1/exports/proofs is missing on this server" if "404" in text else ""))
            self.collect_console(expected=lambda m: "/v1/exports/proofs" in m and "404" in m)
            return
        name, data = self.wait_download(lambda n: n not in before, f"the {format_name} export file")
        self.check(len(data) > 0, f"the {format_name} export ({name}) is not empty")
        check_content(data)

    def check_ink(self, body, rect, pen, touch, line):
        ink = body["ink"]
        canvas, strokes = ink["canvas"], ink["strokes"]
        self.check(ink.get("format") == "countersign.ink/v1", "the pad sends countersign.ink/v1")
        self.check(canvas == {"width": round(rect["width"]), "height": round(rect["height"])},
                   f"the ink canvas is the pad's CSS size: {canvas} vs {rect['width']}x{rect['height']}")
        self.check(len(strokes) == 3, f"three strokes recorded: {len(strokes)}")
        if len(strokes) != 3:
            return
        for stroke, source, name in zip(strokes, (pen, touch, line), ("pen", "touch", "mouse")):
            x0, y0 = source[0][0] - rect["left"], source[0][1] - rect["top"]
            self.check(abs(stroke[0][0] - x0) <= 0.6 and abs(stroke[0][1] - y0) <= 0.6,
                       f"the {name} stroke starts where the pointer went down: {stroke[0][:2]} vs {[x0, y0]}")
            x1, y1 = source[-1][0] - rect["left"], source[-1][1] - rect["top"]
            self.check(abs(stroke[-1][0] - x1) <= 0.6 and abs(stroke[-1][1] - y1) <= 0.6,
                       f"the {name} stroke ends where the pointer went: {stroke[-1][:2]} vs {[x1, y1]}")
            self.check(len(stroke) >= len(source) * 0.5, f"the {name} stroke kept its samples ({len(stroke)} of {len(source)})")
        self.check(all(len(p) == 4 for p in strokes[0]), "the pen stroke carries pressure")
        pressures = [p[3] for p in strokes[0]]
        self.check(abs(pressures[0] - 0.2) < 0.01 and abs(pressures[-1] - 0.8) < 0.01, f"pen pressure 0.2 → 0.8: {pressures[0]} → {pressures[-1]}")
        self.check(all(len(p) == 3 for p in strokes[2]), "the mouse stroke carries no pressure")
        times = [p[2] for stroke in strokes for p in stroke]
        self.check(times[0] == 0 and all(b >= a for a, b in zip(times, times[1:])), "t starts at 0 and never decreases")
        self.check(all(abs(v * 10 - round(v * 10)) < 1e-6 for stroke in strokes for p in stroke for v in p[:2]),
                   "coordinates are rounded to 0.1")
        self.check(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+0[12]:00", body["captured_at"]) is not None,
                   f"captured_at carries the Berlin offset: {body['captured_at']}")
        location = body.get("location") or {}
        self.check(abs(location.get("lat", 0) - SIGNING_SPOT[0]) < 1e-6 and location.get("accuracy_m") == 12,
                   f"the browser's location is attached: {location}")

    def record_attempt(self):
        """The courier first finds nobody home: a failed attempt through the capture view's form
        (with the emulated GPS), stored and shown by the API while the delivery stays pending."""
        self.js("document.getElementById('attempt-panel').open = true")
        self.by_id("attempt-reference").send_keys(self.reference)
        Select(self.by_id("attempt-reason")).select_by_value("recipient_absent")
        self.by_id("attempt-note").send_keys("Nobody home; card left")
        self.by_id("attempt-location").click()
        self.by_id("attempt-submit").click()
        kind, text = self.wait_status("attempt-status", "the failed attempt to be recorded")
        self.require(kind == "ok", f"recording the failed attempt failed: {text}")
        delivery = json.loads(self.api("dispatcher", f"/v1/deliveries/{self.reference}")[0])
        attempts = delivery.get("attempts", [])
        self.check(delivery["status"] == "pending", f"a failed attempt leaves the delivery pending: {delivery['status']}")
        self.check(len(attempts) == 1 and attempts[0]["reason"] == "recipient_absent" and attempts[0]["note"] == "Nobody home; card left",
                   f"the API stored the attempt as sent: {attempts}")
        self.check(attempts and attempts[0]["location"] is not None and attempts[0]["flags"] == [],
                   f"the attempt carries the device's location, inside the geofence: {attempts}")
        self.check(attempts and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+0[12]:00", attempts[0]["captured_at"]) is not None,
                   f"the attempt's captured_at carries the Berlin offset: {attempts and attempts[0]['captured_at']}")
        self.screenshot("capture-attempt-phone")
        self.js("document.getElementById('attempt-panel').open = false")

    def check_labels(self, where):
        """Every visible form control has a label (or aria-label) and can take the keyboard focus."""
        unlabeled = self.js("""
            return Array.from(document.querySelectorAll('input, select, textarea, button'))
              .filter(e => e.offsetParent !== null)
              .filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !(e.tagName === 'BUTTON' && e.textContent.trim()))
              .map(e => e.id || e.outerHTML.slice(0, 60));""")
        self.check(not unlabeled, f"{where}: controls without a label: {unlabeled}")
        unreachable = self.js("""
            return Array.from(document.querySelectorAll('input, select, button, a[href]'))
              .filter(e => e.offsetParent !== null && e.tabIndex < 0).map(e => e.id || e.outerHTML.slice(0, 60));""")
        self.check(not unreachable, f"{where}: controls out of the keyboard order: {unreachable}")

    def close(self):
        try:
            self.driver.quit()
        except Exception:
            pass


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--out", default="test-output/browser")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    parser.add_argument("--binary", default=".build/debug/countersign", help="countersign, for `render` (outline comparison)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    started = time.monotonic()
    test = ConsoleTest(args)
    crashed = None
    try:
        test.run()
    except Exception as error:   # report, screenshot and log whatever stopped the scenario
        crashed = error
        test.failures.append(f"[{test.steps[-1][0] if test.steps else 'setup'}] stopped: {error}")
        if not isinstance(error, TestFailure):
            traceback.print_exc()
        try:
            test.screenshot("failure")
        except Exception:
            pass
    try:
        test.collect_console(expected=None)
    except Exception:
        pass
    test.close()
    elapsed = time.monotonic() - started
    steps = [(name, round(b - a, 1)) for (name, a), (_, b) in zip(test.steps, test.steps[1:] + [("end", time.monotonic())])]
    summary = {"reference": test.reference, "seconds": round(elapsed, 1), "steps": steps,
               "pad_vs_server": getattr(test, "comparison", None), "outline_vs_render": getattr(test, "outline_check", None),
               "pad_live_vs_final_db": getattr(test, "live_vs_final_db", None),
               "failures": test.failures, "console_errors": test.console_errors}
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2, ensure_ascii=False)
    for message in test.console_errors:
        print(f"browser-test: CONSOLE ERROR {message}")
    for message in test.failures:
        print(f"browser-test: FAILED {message}")
    ok = not test.failures and not test.console_errors and crashed is None
    print(f"browser-test: {'passed' if ok else 'FAILED'} in {elapsed:.1f} s; screenshots in {args.out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
