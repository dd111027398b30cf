-- wrk script: POST /v1/route with tasks read from $WRK_TASKS (one per line), in turn.
-- Prints one JSON summary line (requests, req/s, latency percentiles, errors) at the end.
local tasks = {}
local counter = 0
local k = os.getenv("WRK_K") or "5"

local function json_string(s)
  return '"' .. s:gsub('\\', '\\\\'):gsub('"', '\\"'):gsub('\n', ' ') .. '"'
end

function init(args)
  local path = os.getenv("WRK_TASKS")
  for line in io.lines(path) do
    if #line > 0 then tasks[#tasks + 1] = line end
  end
  if #tasks == 0 then error("no tasks in " .. tostring(path)) end
  counter = math.random(#tasks)
end

function request()
  counter = counter % #tasks + 1
  local body = '{"task":' .. json_string(tasks[counter]) .. ',"k":' .. k .. '}'
  return wrk.format("POST", "/v1/route", {["Content-Type"] = "application/json"}, body)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"seconds":%.2f,"rps":%.1f,"p50_ms":%.2f,"p90_ms":%.2f,"p99_ms":%.2f,"max_ms":%.2f,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}}\n',
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000,
    latency.max / 1000, e.connect, e.read, e.write, e.status, e.timeout))
end
