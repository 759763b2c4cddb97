-- wrk script for scripts/load.sh: a mix of barcode look-ups, product posts, sync pushes and logins.
-- Environment: LOAD_DIR, a folder holding
--   users.txt     one "email password accessToken" a line
--   barcodes.txt  one imported barcode a line
--   posts.txt     one "userIndex barcode sessionToken" a line (a session token per user and barcode)
-- Shares (per request): LOGIN_SHARE (default 0.0005), POST_SHARE (0.05), PUSH_SHARE (0.10); the rest are look-ups.

local dir = os.getenv("LOAD_DIR")
if not dir or dir == "" then error("mix.lua: LOAD_DIR is not set") end

local function lines(name)
  local result = {}
  local file = assert(io.open(dir .. "/" .. name, "r"), "mix.lua: cannot open " .. name)
  for line in file:lines() do
    if #line > 0 then result[#result + 1] = line end
  end
  file:close()
  if #result == 0 then error("mix.lua: " .. name .. " is empty") end
  return result
end

local function split(line)
  local parts = {}
  for part in line:gmatch("%S+") do parts[#parts + 1] = part end
  return parts
end

local loginShare = tonumber(os.getenv("LOGIN_SHARE") or "0.0005")
local postShare = tonumber(os.getenv("POST_SHARE") or "0.05")
local pushShare = tonumber(os.getenv("PUSH_SHARE") or "0.10")

local counter = 0
function setup(thread)
  counter = counter + 1
  thread:set("thread_id", counter)
end

local users, barcodes, posts
local sequence = 0

function init(args)
  math.randomseed(os.time() * 1000 + (thread_id or 0) * 7919)
  users = {}
  for _, line in ipairs(lines("users.txt")) do users[#users + 1] = split(line) end
  barcodes = lines("barcodes.txt")
  posts = {}
  for _, line in ipairs(lines("posts.txt")) do posts[#posts + 1] = split(line) end
end

local function bearer(user)
  return { ["Authorization"] = "Bearer " .. user[3], ["Content-Type"] = "application/json" }
end

function request()
  sequence = sequence + 1
  local roll = math.random()
  if roll < loginShare then
    local user = users[math.random(#users)]
    local body = string.format('{"email":"%s","password":"%s"}', user[1], user[2])
    return wrk.format("POST", "/auth/login", { ["Content-Type"] = "application/json" }, body)
  elseif roll < loginShare + postShare then
    local post = posts[math.random(#posts)]
    local user = users[tonumber(post[1])]
    local body = string.format('{"token":"%s","name":"Load %d-%d","barcode":"%s","test":false}',
      post[3], thread_id or 0, sequence, post[2])
    return wrk.format("POST", "/products", bearer(user), body)
  elseif roll < loginShare + postShare + pushShare then
    local user = users[math.random(#users)]
    local hlc = string.format("%013d-%05d-load%d", os.time() * 1000 - 2000, sequence % 100000, thread_id or 0)
    local body = string.format(
      '{"changes":[{"id":"load-%d-%d-%d","collection":"pantry_items","recordId":"item-%d","hlc":"%s",' ..
      '"fields":{"name":"Oat milk","quantity":%d,"boughtAt":1700000000000,"status":"inPantry"},"deleted":false}]}',
      thread_id or 0, os.time(), sequence, math.random(1000), hlc, math.random(10))
    return wrk.format("POST", "/v1/sync/push", bearer(user), body)
  else
    local user = users[math.random(#users)]
    return wrk.format("GET", "/products?barcode=" .. barcodes[math.random(#barcodes)], bearer(user))
  end
end
