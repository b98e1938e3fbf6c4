-- wrk script: idempotent POST writes, each with a fresh Idempotency-Key (so each is a real write: the effect,
-- its audit event and its idempotency record in one transaction).
local counter = 0
local thread_id = 0
local threads = {}

function setup(thread)
  thread:set("id", thread_id)
  thread_id = thread_id + 1
  table.insert(threads, thread)
end

function init(args)
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("FISCUS_BENCH_KEY")
  wrk.body = '{"domain":"security","title":"bench","source_type":"bench","source_reference":"bench://1",'
    .. '"source_hash":"sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}'
end

function request()
  counter = counter + 1
  wrk.headers["Idempotency-Key"] = string.format("bench-%d-%d-%d", id, counter, os.time())
  return wrk.format(nil, nil, nil, nil)
end

function response(status, headers, body)
  if status ~= 201 then
    error("unexpected status " .. status)
  end
end
