-- Proof uploads for wrk: one proof per delivery, {prefix}0, {prefix}1, ... in order, bodies taken
-- round-robin from a file holding one JSON upload body per line (Benchmarks/api_load.py
-- --mode bodies writes it from the corpus). One wrk thread keeps the references unique.
--
--   wrk -t1 -c8 -d60s --latency -s Benchmarks/upload.lua http://127.0.0.1:8080 -- BODIES TOKEN [PREFIX]
local bodies = {}
local headers = {}
local prefix = "L-"
local counter = 0

function init(args)
  local file = assert(io.open(args[1], "rb"), "upload.lua: cannot open the bodies file " .. tostring(args[1]))
  for line in file:lines() do
    if #line > 0 then bodies[#bodies + 1] = line end
  end
  file:close()
  assert(#bodies > 0, "upload.lua: no bodies in " .. args[1])
  headers["Authorization"] = "Bearer " .. assert(args[2], "upload.lua: no token")
  headers["Content-Type"] = "application/json"
  prefix = args[3] or prefix
end

function request()
  local i = counter
  counter = counter + 1
  return wrk.format("POST", "/v1/deliveries/" .. prefix .. i .. "/proof", headers, bodies[i % #bodies + 1])
end
