-- wrk script: POST /v1/route with tasks from $WRK_TASKS (one per line) and count, per thread,
-- the index_revision of every answer (one revision per answer: a request finishes on the index it
-- started on). Prints one JSON line: requests, req/s, latency percentiles, errors, revisions seen.
local tasks = {}
local counter = 0
local revisions = {}
local missing = 0
local threads = {}

local function json_string(s)
  return '"' .. s:gsub('\\', '\\\\'):gsub('"', '\\"'):gsub('\n', ' ') .. '"'
end

function setup(thread)
  threads[#threads + 1] = thread
end

function init(args)
  for line in io.lines(os.getenv("WRK_TASKS")) do
    if #line > 0 then tasks[#tasks + 1] = line end
  end
  counter = math.random(#tasks)
end

function request()
  counter = counter % #tasks + 1
  local body = '{"task":' .. json_string(tasks[counter]) .. ',"k":3}'
  return wrk.format("POST", "/v1/route", {["Content-Type"] = "application/json"}, body)
end

function response(status, headers, body)
  local rev = body and body:match('"index_revision"%s*:%s*"(%x+)"')
  if rev then
    revisions[rev] = (revisions[rev] or 0) + 1
  else
    missing = missing + 1
  end
  -- Published as a string the main thread reads in done().
  local parts = {}
  for r, n in pairs(revisions) do parts[#parts + 1] = string.format('"%s":%d', r, n) end
  wrk.thread:set("revisions", table.concat(parts, ","))
  wrk.thread:set("missing", missing)
end

function done(summary, latency, requests)
  local merged, without = {}, 0
  for _, t in ipairs(threads) do
    for r, n in string.gmatch(t:get("revisions") or "", '"(%x+)":(%d+)') do
      merged[r] = (merged[r] or 0) + tonumber(n)
    end
    without = without + (tonumber(t:get("missing")) or 0)
  end
  local parts = {}
  for r, n in pairs(merged) do parts[#parts + 1] = string.format('"%s":%d', r, n) end
  table.sort(parts)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"seconds":%.2f,"rps":%.1f,"p50_ms":%.2f,"p90_ms":%.2f,"p99_ms":%.2f,"max_ms":%.2f,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"revisions":{%s},"answers_without_revision":%d}\n',
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000,
    latency.max / 1000, e.connect, e.read, e.write, e.status, e.timeout,
    table.concat(parts, ","), without))
end
