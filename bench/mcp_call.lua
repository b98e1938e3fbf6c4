-- wrk script: MCP tools/call of a read tool (get_workspace) on POST /api/mcp with a bearer key.
function init(args)
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Accept"] = "application/json, text/event-stream"
  wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("FISCUS_BENCH_KEY")
  wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_workspace","arguments":{}}}'
end

function response(status, headers, body)
  if status ~= 200 or not body:find('"isError":false', 1, true) then
    error("unexpected answer " .. status .. ": " .. body)
  end
end
