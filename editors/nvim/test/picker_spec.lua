-- The fallback picker (no Telescope, Neovim's own vim.ui.select): one short
-- line per hit that fits the window, a screenful at a time (no "-- More --"
-- prompt whose Esc raised "Keyboard interrupt"), title hits that say
-- "title", no duplicate rows, and a silent cancel. On the demo history: its
-- search for "test" gives 50 hits, among them tool calls and their outputs
-- (one cursor each) and repeated outputs that would make identical rows.
local T = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/helpers.lua")

local home = T.env.tmp .. "/picker-home"
vim.fn.mkdir(home, "p")
vim.env.HOME = home
vim.env.XDG_DATA_HOME = home .. "/.local/share"
require("recall").setup({})

-- Neovim's own vim.ui.select draws with inputlist(); record what it is
-- given and answer for the user.
local shown, answer
local real_inputlist = vim.fn.inputlist
local function use_builtin()
  vim.ui.select = T.builtin_select
  vim.fn.inputlist = function(choices)
    table.insert(shown, choices)
    local a = table.remove(answer, 1)
    if type(a) == "function" then
      return a(choices)
    end
    return a or 0
  end
end

local function search(query, answers)
  shown, answer = {}, answers
  vim.cmd("RecallSearch " .. query)
  T.wait(30000, function()
    return #shown >= 1
  end, "the picker for " .. query)
  vim.wait(100) -- a next page comes on the next loop turn
end

use_builtin()

T.run("the plugin knows Neovim's own vim.ui.select", function()
  T.ok(require("recall.picker").builtin(), "Neovim's vim.ui.select is the builtin")
end)

T.run("80 columns: each row one line that fits, a screenful per page", function()
  vim.o.columns, vim.o.lines = 80, 24
  search("test", { 0 })
  local rows = shown[1]
  T.ok(#rows <= vim.o.lines - 2, string.format("%d rows shown on a %d-line screen (prompt included)", #rows, vim.o.lines))
  for i, row in ipairs(rows) do
    T.ok(not row:find("\n", 1, true), "row " .. i .. " is one line: " .. row)
    T.ok(vim.fn.strdisplaywidth(row) <= vim.o.columns, string.format("row %d is %d cells wide (window %d): %s", i, vim.fn.strdisplaywidth(row), vim.o.columns, row))
  end
  T.contains(rows[1], "of 4", "the prompt says which part of the list this is")
  T.contains(rows[#rows], "more… (", "the last row pages on")
end)

T.run("'more…' shows the next page; choosing a hit opens it", function()
  vim.o.columns, vim.o.lines = 80, 24
  local size = require("recall.picker").page_size()
  search("test", {
    function(choices)
      return #choices - 1 -- inputlist numbers rows after the prompt from 1
    end,
    2,
  })
  T.eq(#shown, 2, "pages shown")
  T.contains(shown[2][1], "[" .. (size + 1) .. "-", "the second page starts after the first")
  local buf = T.wait_loaded()
  T.contains(vim.api.nvim_buf_get_name(buf), "recall://session/", "the second page's first hit opened")
end)

T.run("title hits say title; no duplicate rows", function()
  vim.o.columns, vim.o.lines = 160, 60
  local raw = require("recall.client").request_sync("recall/search", { query = "test", limit = 50 })
  local cursors = {}
  for _, h in ipairs(raw.hits) do
    cursors[h.cursor] = true
  end
  local unique = vim.tbl_count(cursors)
  -- The server no longer repeats a part (fork copies fold into their
  -- family); the client's dedupe is still checked on a list that does.
  T.eq(unique, #raw.hits, "the server's hits are distinct")
  table.insert(raw.hits, raw.hits[1])
  search("test", { 0 })
  local rows = vim.list_slice(shown[1], 2)
  local seen = {}
  for _, r in ipairs(rows) do
    T.ok(not seen[r], "a row shown twice: " .. r)
    seen[r] = true
  end
  T.ok(#rows <= unique, string.format("%d rows for %d cursors", #rows, unique))
  local kept = {}
  for _, h in ipairs(require("recall").dedupe(raw.hits)) do
    T.ok(not kept[h.cursor], "a cursor kept twice: " .. h.cursor)
    kept[h.cursor] = true
  end
  -- Title hits were shown with an empty kind (" ·  · "); the server now
  -- ranks a session's content above its title, so the rule is checked on
  -- every row: each names its kind.
  search("webhook retry storm", { 0 })
  for _, row in ipairs(vim.list_slice(shown[1], 2)) do
    T.ok(not row:find(" ·  · ", 1, true), "a row with an empty kind: " .. row)
  end
end)

T.run("cancel is silent: Esc (0), and Ctrl-C in the list", function()
  vim.cmd("messages clear")
  search("webhook", { 0 })
  search("webhook", { function()
    error("Keyboard interrupt")
  end })
  T.eq(T.messages_text():find("Keyboard interrupt", 1, true), nil, "Keyboard interrupt in :messages")
  T.eq(#vim.tbl_filter(function(m)
    return m.level == vim.log.levels.ERROR
  end, T.messages), 0, "error notifications")
end)

vim.fn.inputlist = real_inputlist
T.finish()
