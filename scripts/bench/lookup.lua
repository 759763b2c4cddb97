-- wrk script: GET /products?barcode=B with a random seeded barcode per request.
-- Environment: BENCH_TOKEN (access token), BENCH_BARCODES (file with one barcode a line).

local token = os.getenv("BENCH_TOKEN")
local path = os.getenv("BENCH_BARCODES")
if not token or token == "" then error("lookup.lua: BENCH_TOKEN is not set") end
if not path or path == "" then error("lookup.lua: BENCH_BARCODES is not set") end

local barcodes = {}
local file = assert(io.open(path, "r"), "lookup.lua: cannot open " .. path)
for line in file:lines() do
  if #line > 0 then barcodes[#barcodes + 1] = line end
end
file:close()
if #barcodes == 0 then error("lookup.lua: no barcodes in " .. path) end

wrk.method = "GET"
wrk.headers["Authorization"] = "Bearer " .. token
wrk.headers["Accept"] = "application/json"

local counter = 0
function setup(thread)
  counter = counter + 1
  thread:set("thread_id", counter)
end

function init(args)
  math.randomseed(os.time() * 1000 + (thread_id or 0) * 7919)
end

function request()
  return wrk.format(nil, "/products?barcode=" .. barcodes[math.random(#barcodes)])
end
