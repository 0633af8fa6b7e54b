-- :RecallSessions, :RecallRead <cursor>, transcript navigation, workspace symbols.
local T = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/helpers.lua")
T.setup({ sessions_limit = 4 })

local TITLE = "Investigate nightly worker failure"
local session_cursor

T.run(":RecallSessions lists sessions with titles and pages on", function()
  vim.cmd("RecallSessions")
  local sel = T.wait_select(15000, "the sessions picker")
  T.eq(#sel.items, 5, "4 sessions + a 'more' item")
  T.contains(sel.labels[5], "more sessions", "last item")
  local titles = {}
  -- Page through until the known title shows up.
  for _ = 1, 5 do
    for i, s in ipairs(sel.items) do
      if s.title then
        table.insert(titles, s.title)
      end
      if s.title == TITLE then
        session_cursor = s.cursor
        T.contains(sel.labels[i], "10 msgs", "label counts")
        T.contains(sel.labels[i], "ocgen/recall-v1/projects/ledger", "label directory")
        sel.choose(s, i)
        break
      end
    end
    if session_cursor then
      break
    end
    local more = sel.items[#sel.items]
    T.ok(more.more, "a next page while " .. TITLE .. " is not listed yet; saw: " .. table.concat(titles, ", "))
    sel.choose(more, #sel.items)
    sel = T.wait_select(15000, "the next sessions page")
  end
  T.ok(session_cursor, TITLE .. " listed; saw: " .. table.concat(titles, ", "))
  local buf = T.wait_loaded()
  T.eq(vim.api.nvim_buf_get_name(buf), "recall://session/ses_dd7571907ffe5vPpW7vxTE77tW", "buffer name")
  local lines = T.lines(buf)
  T.contains(lines[1], TITLE, "heading")
  T.contains(lines, "messages 1–10 of 10", "whole session")
  T.contains(lines, "shard the nightly upload by fiscal quarter", "the decision")
  T.eq(vim.bo[buf].modifiable, false, "modifiable")
end)

T.run(":RecallSessions <filter> narrows by title", function()
  vim.cmd("RecallSessions refund window")
  local sel = T.wait_select(15000, "the sessions picker")
  T.find_label(sel, "Refund window design (renamed)")
  T.contains(sel.opts.prompt, "refund window", "prompt")
end)

T.run(":RecallRead <cursor> opens the window", function()
  T.ok(session_cursor, "a cursor from the sessions test")
  vim.cmd("RecallRead " .. session_cursor)
  local buf = T.wait_loaded()
  T.eq(vim.api.nvim_buf_get_name(buf), "recall://read/" .. session_cursor, "buffer name")
  T.contains(T.lines(buf), "# " .. TITLE, "heading")
  T.contains(T.lines(buf), "ERR_QUOTA_7731", "window text")
  T.eq(vim.bo[buf].filetype, "markdown", "filetype")
  T.eq(vim.bo[buf].buftype, "nofile", "buftype")
  T.eq(vim.bo[buf].modifiable, false, "modifiable")
  T.ok(vim.b[buf].recall.nav.tail, "nav cursors kept in b:recall")
end)

T.run(":RecallRead <cursor> head 3, then ]r / [r / [R / ]R paging", function()
  local function range()
    T.wait_loaded()
    return T.lines(0)[3]:match("messages (%d+–%d+) of")
  end
  vim.cmd("RecallRead " .. session_cursor .. " head 3")
  T.eq(range(), "1–3", "head window")
  vim.cmd("normal ]r")
  T.eq(range(), "4–6", "]r: next window, same size")
  vim.cmd("normal ]r")
  T.eq(range(), "7–9", "]r again")
  vim.cmd("normal [r")
  T.eq(range(), "4–6", "[r: previous window")
  vim.cmd("normal ]R")
  T.eq(range(), "8–10", "]R: tail")
  vim.cmd("normal [R")
  T.eq(range(), "1–3", "[R: head")
end)

T.run(":RecallRead takes a session id or a recall: URI too", function()
  vim.cmd("RecallRead ses_dd7572c15ffeYOkoClbrg3kQ0s")
  T.wait_loaded()
  T.eq(vim.api.nvim_buf_get_name(0), "recall://session/ses_dd7572c15ffeYOkoClbrg3kQ0s", "buffer for a session id")
  T.contains(T.lines(0)[1], "Refund window design (renamed)", "heading")
  vim.cmd("RecallRead recall:/session/ses_dd7571907ffe5vPpW7vxTE77tW")
  T.wait_loaded()
  T.eq(vim.api.nvim_buf_get_name(0), "recall://session/ses_dd7571907ffe5vPpW7vxTE77tW", "buffer for a URI")
  T.contains(T.lines(0)[1], TITLE, "heading")
end)

T.run("a bad cursor says what is wrong in the buffer", function()
  vim.cmd("RecallRead rc1.bm90LWEtY3Vyc29y.AAAA")
  T.wait_loaded()
  T.contains(T.lines(0), "Recall could not open", "error text")
  T.ok(#T.messages > 0 and T.messages[1].level == vim.log.levels.ERROR, "an error notification")
  T.contains(T.messages[1].msg, "cursor", "the error names the cursor")
end)

T.run("workspace/symbol locations (recall:/session/…) open as transcripts", function()
  local client = require("recall.client").current()
  T.ok(client, "a running client")
  local res = require("recall.client").request_sync("workspace/symbol", { query = "nightly worker" })
  T.ok(res and #res > 0, "symbols for 'nightly worker'")
  local uri = res[1].location.uri
  T.contains(uri, "recall:/session/", "symbol uri")
  local b = vim.uri_to_bufnr(uri)
  vim.api.nvim_win_set_buf(0, b)
  T.wait_loaded(b)
  T.contains(T.lines(b), "# " .. TITLE, "transcript from a server URI")
  T.eq(vim.bo[b].filetype, "markdown", "filetype")
end)

T.finish()
