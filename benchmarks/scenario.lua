-- wrk script for benchmarks/run.py:  wrk ... -s scenario.lua URL -- REQUESTS_FILE
--
-- REQUESTS_FILE holds one request a line, "METHOD PATH [BODY]"; wrk cycles over them in
-- order, so a scenario can spread its load over many records. done() prints one line,
-- "wrk-result {json}", with exact counts and microsecond percentiles for run.py to read.

local requests, next_index = {}, 1

function init(args)
   for line in io.lines(args[1]) do
      local method, path, body = line:match("^(%S+) (%S+) ?(.*)$")
      local headers = {}
      for name, value in pairs(wrk.headers) do
         headers[name] = value
      end
      if body == "" then
         body = nil
      else
         headers["Content-Type"] = "application/json"
      end
      requests[#requests + 1] = wrk.format(method, path, headers, body)
   end
end

function request()
   local req = requests[next_index]
   next_index = next_index % #requests + 1
   return req
end

function done(summary, latency, _)
   local errors = summary.errors
   io.write(string.format(
      'wrk-result {"requests": %d, "duration_us": %d, "p50_us": %d, "p99_us": %d, '
         .. '"status_errors": %d, "socket_errors": %d}\n',
      summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
      errors.status, errors.connect + errors.read + errors.write + errors.timeout))
end
