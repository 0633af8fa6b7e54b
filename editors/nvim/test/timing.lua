-- Time from :RecallSearch to the picker showing hits (run by timing.sh,
-- not by run.sh). The picker is the specs' stand-in for vim.ui.select, so
-- what is timed is the plugin and the server, not a UI's drawing.
local hrtime = (vim.uv or vim.loop).hrtime
local shown
vim.ui.select = function(items)
  shown = items
end
-- "no hits" ends a search too.
vim.notify = function(msg)
  if tostring(msg):find("no hits", 1, true) then
    shown = {}
  end
end

require("recall").setup({
  cmd = { os.getenv("RECALL_TEST_BIN"), "lsp" },
  db = os.getenv("RECALL_TEST_DB"),
  index = os.getenv("RECALL_TEST_INDEX"),
  autostart = false,
})

local function search(q)
  shown = nil
  local t0 = hrtime()
  vim.cmd("RecallSearch " .. q)
  local returned = (hrtime() - t0) / 1e6
  if not vim.wait(30000, function()
    return shown ~= nil
  end, 1) then
    error("no picker for " .. q)
  end
  return (hrtime() - t0) / 1e6, returned, #shown
end

local out = {}
local first, back, n = search("webhook retry storm")
table.insert(out, string.format("first :RecallSearch (server start + search, warm index): %.0f ms to the picker (%d hits), command returned after %.1f ms", first, n, back))
-- Topics of the public corpus's sessions (testdata/corpus/public).
local queries = { "webhook retry storm", "terraform state lock", "borrow error", "graceful shutdown SIGTERM", "duplicate signup email", "humantime", "catchup", "node_exporter", "too many clients", "golang.org/x/net" }
local times = {}
for round = 1, 3 do
  for _, q in ipairs(queries) do
    local t = search(q)
    table.insert(times, t)
  end
end
table.sort(times)
local function pct(p)
  return times[math.max(1, math.ceil(#times * p))]
end
table.insert(out, string.format("later searches (%d): median %.0f ms, p95 %.0f ms, max %.0f ms to the picker", #times, pct(0.5), pct(0.95), times[#times]))
io.stdout:write(table.concat(out, "\n") .. "\n")
require("recall.client").stop()
vim.wait(2000)
vim.cmd("qa!")
