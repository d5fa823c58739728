-- One benchmark scenario for wrk, driven by benchmarks/run.py.
--
--   wrk ... -s scenario.lua URL -- METHOD PATHS_FILE [BODY]
--
-- METHOD      HTTP method of every request.
-- PATHS_FILE  request paths, one a line; requests cycle over them in order, so a
--             scenario can spread its load over many records (200 tickets, 200 events).
-- BODY        request body (absent or "" for none).
--
-- done() prints one line starting with "wrk-result " and holding a JSON object, so
-- run.py reads exact counts and microsecond percentiles instead of wrk's rounded text.

local requests = {}
local next_index = 1

function init(args)
   local method, paths_file, body = args[1], args[2], args[3]
   if body == "" then
      body = nil
   end
   for path in io.lines(paths_file) do
      if path ~= "" then
         requests[#requests + 1] = wrk.format(method, path, nil, body)
      end
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
