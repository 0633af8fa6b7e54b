-- :checkhealth recall: binary and version, the history, the index, the
-- server and the daemon; an error with the fix when the binary is missing.
local T = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/helpers.lua")
T.setup({ autostart = false })

local function checkhealth()
  vim.cmd("checkhealth recall")
  local text = table.concat(T.lines(0), "\n")
  vim.cmd("bwipeout!")
  return text
end

T.run(":checkhealth recall on the fixture: all OK", function()
  vim.cmd("RecallSearch ERR_QUOTA_7731") -- starts the server and builds the index
  T.wait_select(15000, "the search picker")
  local text = checkhealth()
  T.contains(text, T.env.bin, "the binary's path")
  -- whatever this build calls itself (a tag, or a commit in a clone without tags)
  local version = vim.trim(vim.fn.system({ T.env.bin, "version" }))
  T.ok(version:match("^recall %S+$"), "`recall version` prints one line: " .. version)
  T.contains(text, "(" .. version .. ")", "its `recall version`")
  T.contains(text, "history: " .. T.env.db, "the history")
  T.contains(text, "index " .. T.env.index .. ": 10 sessions, ", "the index and its counts")
  T.contains(text, "synced", "its freshness")
  T.contains(text, "the server is running", "the server")
  T.contains(text, "daemon socket", "the daemon")
  T.ok(not text:find("ERROR"), "no ERROR:\n" .. text)
  T.ok(not text:find("WARN"), "no WARN:\n" .. text)
end)

T.run(":checkhealth recall without the binary: an ERROR that says how to fix it", function()
  require("recall.client").stop()
  T.setup({ cmd = { "/nonexistent/recall", "lsp" }, autostart = false })
  local text = checkhealth()
  T.contains(text, "ERROR", "an error")
  T.contains(text, '"/nonexistent/recall" is not an executable', "names the binary")
  T.contains(text, "cmd = { '/path/to/recall', 'lsp' }", "the fix")
end)

T.run(":checkhealth recall with a db that does not exist: an ERROR naming it", function()
  T.setup({ db = T.env.tmp .. "/nowhere/opencode.db", autostart = false })
  local text = checkhealth()
  T.contains(text, "ERROR", "an error")
  T.contains(text, "nowhere/opencode.db", "names the path")
end)

T.finish()
