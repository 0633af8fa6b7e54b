-- The documented setup on a machine without OpenCode history: no setup at
-- all, then require("recall").setup({}) (the README's), with `recall` from
-- $PATH and no option. The server falls back to its bundled demo history
-- (37 sessions). Issue 14: an empty Lua table went out as [] and the server
-- refused it; every command then froze for 15 s.
local T = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/helpers.lua")
local hrtime = (vim.uv or vim.loop).hrtime

-- An empty home: no OpenCode history and no Recall index yet. The server
-- inherits these when Neovim starts it.
local home = T.env.tmp .. "/default-home"
vim.fn.mkdir(home, "p")
vim.env.HOME = home
vim.env.XDG_DATA_HOME = home .. "/.local/share"
vim.env.OPENCODE_DB = nil

local STORM = "Stop webhook retry storm with backoff and jitter"

local function ms_since(t0)
  return (hrtime() - t0) / 1e6
end

local function client()
  return require("recall.client")
end

T.run("no setup at all: :RecallSearch finds the demo's webhook retry storm", function()
  T.eq(package.loaded["recall"], nil, "require('recall') before the first command")
  T.eq(vim.fn.exepath("recall") ~= "", true, "recall is on $PATH (run.sh puts the binary under test there)")
  local t0 = hrtime()
  vim.cmd("RecallSearch webhook retry storm")
  local back = ms_since(t0)
  T.ok(back < T.AT_ONCE_MS, string.format(":RecallSearch returned after %.0f ms (want < %d: it must not wait for the server)", back, T.AT_ONCE_MS))
  local sel = T.wait_select(60000, "the search picker on the demo history")
  local first = ms_since(t0)
  local i, hit = T.find_label(sel, STORM)
  T.eq(i, 1, "the storm session is ranked first")
  -- Each row names what matched (a title hit says "title", never nothing).
  local kind = sel.labels[1]:match("^.- · (%a+) · ")
  T.ok(kind == "title" or kind == "assistant" or kind == "user", "the first row names its kind: " .. sel.labels[1])
  local st = client().request_sync("recall/status", {})
  T.ok(st and st.demo == true, "the server reads the bundled demo: " .. vim.inspect(st and st.source))
  T.out(string.format("    first results after %.0f ms (cold: the demo unpacked and indexed)", first))
end)

T.run("the initializationOptions go out as an object, not []", function()
  local c = client().current()
  T.ok(c, "a running client")
  T.eq(vim.json.encode(c.config.init_options), "{}", "initializationOptions on the wire")
end)

T.run(":RecallSessions lists the demo's 37 sessions", function()
  vim.cmd("RecallSessions")
  local sel = T.wait_select(15000, "the sessions picker")
  T.eq(#sel.items, 37, "sessions (no 'more' row: the default page is 50)")
  T.find_label(sel, STORM)
end)

T.run("setup({}) then :RecallSearch, warm: picker within 1 s, transcript opens", function()
  client().stop()
  T.wait(5000, function()
    return #vim.tbl_filter(function(c)
      return c.name == "recall"
    end, (vim.lsp.get_clients or vim.lsp.get_active_clients)()) == 0
  end, "the first client to stop")
  require("recall").setup({})
  local t0 = hrtime()
  vim.cmd("RecallSearch webhook retry storm")
  T.ok(ms_since(t0) < T.AT_ONCE_MS, "the command returned at once")
  local sel = T.wait_select(15000, "the search picker")
  local first = ms_since(t0)
  T.ok(first < 1000, string.format("first results after %.0f ms on a warm index (want < 1000, server start included)", first))
  T.out(string.format("    first results after %.0f ms (warm index, server start included)", first))
  -- The assistant's answer; its row shows the part of the snippet around
  -- the best match, so find it by its snippet.
  local i, hit
  for n, h in ipairs(sel.items) do
    if (h.snippet or ""):find("Fixed the retry storm", 1, true) then
      i, hit = n, h
      break
    end
  end
  T.ok(hit, "a hit on the answer \"Fixed the retry storm…\"; rows:\n  " .. table.concat(sel.labels, "\n  "))
  sel.choose(hit, i)
  local buf = T.wait_loaded()
  T.contains(vim.api.nvim_buf_get_name(buf), "recall://session/" .. hit.sessionId, "transcript buffer")
  T.contains(T.lines(buf), "Fixed the retry storm", "transcript text")
  -- On the matched words (the longest highlight: "retried" matches retry).
  T.ok(vim.api.nvim_get_current_line():lower():find("retr", 1, true), "cursor on the hit: " .. vim.api.nvim_get_current_line())
  T.eq(vim.json.encode(client().current().config.init_options), "{}", "initializationOptions after setup({})")
end)

T.finish()
