#!/usr/bin/env python3
"""Writes the small committed seed corpus under Fuzz/corpus/<target>/ (deterministic; re-run to
regenerate). Seeds are hand-made, not taken from the (unlicensed) shared corpus."""
import json, math, os, sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")

def wave(n=24, x0=40.0, y0=100.0, dx=20.0, amp=40.0, t0=0.0, pressure=False):
    pts = []
    for i in range(n):
        p = [round(x0 + i * dx, 3), round(y0 + amp * math.sin(i / 3.0), 3), t0 + i * 16]
        if pressure:
            p.append(round(0.3 + 0.5 * abs(math.sin(i / 5.0)), 4))
        pts.append(p)
    return pts

def write(target, name, data):
    d = os.path.join(root, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())

def ink(strokes, w=600, h=200, fmt=True):
    doc = {}
    if fmt:
        doc["format"] = "countersign.ink/v1"
    doc["canvas"] = {"width": w, "height": h}
    doc["strokes"] = strokes
    return json.dumps(doc, separators=(",", ":"))

def pad(strokes, v3=True):
    groups = []
    for s in strokes:
        pts = [{"x": p[0], "y": p[1], "time": 1700000000000 + p[2], **({"pressure": p[3]} if len(p) > 3 else {})} for p in s]
        groups.append({"penColor": "black", "minWidth": 0.5, "points": pts} if v3 else pts)
    return json.dumps(groups)

def inkml(strokes, with_format=True, diff=False):
    head = ('<inkml:ink xmlns:inkml="http://www.w3.org/2003/InkML"><inkml:definitions>'
            '<inkml:traceFormat><inkml:channel name="X" type="decimal"/><inkml:channel name="Y" type="decimal"/>'
            '<inkml:channel name="T" type="decimal" units="ms"/><inkml:channel name="F" max="1"/></inkml:traceFormat>'
            '</inkml:definitions>') if with_format else "<ink>"
    tail = "</inkml:ink>" if with_format else "</ink>"
    tr = []
    for s in strokes:
        if with_format:
            vals = [f"{p[0]} {p[1]} {p[2]} {p[3] if len(p) > 3 else 0.5}" for p in s]
        else:
            vals = [f"{p[0]} {p[1]}" for p in s]
        if diff and len(vals) > 2:
            vals = vals[:1] + ["'" + v.replace(" ", " '") for v in ["1 1" if not with_format else "1 1 16 0"] * (len(vals) - 1)]
        tag = "inkml:trace" if with_format else "trace"
        tr.append(f"<{tag}>{', '.join(vals)}</{tag}>")
    return head + "".join(tr) + tail

def svc(strokes, task2=False):
    rows = []
    for s in strokes:
        for i, p in enumerate(s):
            x, y, t = int(p[0] * 10), int(5000 - p[1] * 10), 31077710 + int(p[2])
            btn = 0 if i == 0 else 1
            rows.append(f"{x} {y} {t} {btn}" + (f" 1350 450 {int(300 + 2 * i)}" if task2 else ""))
    return f"{len(rows)}\n" + "\n".join(rows) + "\n"

a = wave(pressure=True)
b = wave(n=12, x0=80, y0=150, dx=30, amp=10, t0=900)
strokes = [a, b]

write("ink_json", "two-strokes.json", ink(strokes))
write("ink_json", "no-format-tag.json", ink([wave()], w=800, h=300, fmt=False))
write("ink_json", "null-pressure.json", ink([[p[:3] + [None] for p in wave(n=12)]]))
write("ink_json", "exponents.json", '{"canvas":{"width":6e2,"height":2E2},"strokes":[[' +
      ",".join(f"[{p[0]}e0,{p[1]},{p[2]}]" for p in wave(n=12)) + "]],\"x\":{\"y\":[1,true,null,\"\\u00e9\"]}}")
write("ink_json", "invalid-1e999.json", '{"canvas":{"width":600,"height":200},"strokes":[[[1e999,1,0]]]}')

write("signature_pad", "v3.json", pad(strokes))
write("signature_pad", "v2-bare-arrays.json", pad([wave(n=15)], v3=False))
write("signature_pad", "single-dot.json", '[{"points":[{"x":1,"y":2,"time":3}]}]')

write("inkml", "prefixed.inkml", inkml(strokes))
write("inkml", "minimal.inkml", inkml(strokes, with_format=False))
write("inkml", "differences.inkml", inkml([wave(n=12)], with_format=False, diff=True))
write("inkml", "cdata-comment-pi.inkml", '<?xml version="1.0"?><!-- c --><ink><trace><![CDATA[0 0, 100 50, 200 0]]>'
      ', 300 50, 400 0, 410 5, 420 0, 430 5, 440 0, 450 5</trace><trace type="penUp">1 1</trace>&#x20;&lt;</ink>')
write("inkml", "doctype.inkml", '<!DOCTYPE ink [<!ENTITY a "aaaa">]><ink><trace>&a;</trace></ink>')

write("svc2004", "task1.txt", svc(strokes))
write("svc2004", "task2-crlf.txt", svc([wave(n=14)], task2=True).replace("\n", "\r\n"))
write("svc2004", "count-mismatch.txt", "5\n1 2 3 0\n")

# Adversarial shapes (issue 20; Benchmarks/linearity.sh times them at size): small versions, so the
# fuzzers mutate from the structures that once cost quadratic time or a parse differential.
write("inkml", "many-attributes-repeat.inkml", "<ink><trace " + " ".join(f'a{i}="1"' for i in range(300))
      + ' a0="2">0 0, 100 50</trace></ink>')
write("inkml", "many-siblings.inkml", "<ink>" + '<x a="1"/>' * 300 + "<trace>0 0, 100 50, 200 0</trace></ink>")
write("ink_json", "duplicate-nested-member.json", '{"canvas":{"width":600,"width":601,"height":200},"strokes":[['
      + ",".join(json.dumps(p) for p in wave()) + "]]}")
write("ink_json", "deep-unknown-member.json", '{"canvas":{"width":600,"height":200},"x":' + "[" * 60 + "]" * 60
      + ',"strokes":[[' + ",".join(json.dumps(p) for p in wave()) + "]]}")
write("ink_json", "escaped-member-names.json", '{"canv\\u0061s":{"width":600,"height":200},"strokes":[['
      + ",".join(json.dumps(p) for p in wave()) + "]],\"n\\u006fte\":\"\\u00e9\\u00e9\"}")
write("signature_pad", "duplicate-point-members.json", '[{"points":[{"x":1,"x":2,"y":2,"time":3}]}]')

# The renderer target: the first byte picks the layout, the rest is any format.
for i, (name, body) in enumerate([("ink", ink(strokes)), ("pad", pad(strokes)), ("inkml", inkml(strokes)), ("svc", svc(strokes))]):
    write("render", f"{name}.bin", bytes([i * 0x41 & 0xFF]) + body.encode())
write("render", "pressure.bin", bytes([0x80]) + ink(strokes).encode())
print("seeds written to", root)
