-- Inside transcripts: :RecallRead honours mode and limit for a session id
-- or a recall: URI, hover works on the ids a transcript shows, the "Open
-- transcript" link of a hover can be followed, and :help recall lands on
-- the intro.
local T = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/helpers.lua")
T.setup({ autostart = false })

local NIGHTLY = "ses_dd7571907ffe5vPpW7vxTE77tW"
local AUDIT, CHILD = "ses_dd75710ceffe6gBi2uc0ZER9fC", "ses_dd7571026ffeevVSsbfV4taNZK"

local function range(buf)
  return T.lines(buf)[3]:match("messages (%d+–%d+) of")
end

local function float()
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(w).relative ~= "" then
      return w, table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false), "\n")
    end
  end
end

local function close_floats()
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(w).relative ~= "" then
      vim.api.nvim_win_close(w, true)
    end
  end
end

T.run(":RecallRead ses_… head 5 opens the first five messages", function()
  vim.cmd("RecallRead " .. NIGHTLY .. " head 5")
  local buf = T.wait_loaded()
  T.eq(vim.api.nvim_buf_get_name(buf), "recall://session/" .. NIGHTLY .. "?mode=head&limit=5", "buffer name")
  T.eq(range(buf), "1–5", "window")
  vim.cmd("normal ]r")
  T.eq(range(T.wait_loaded()), "6–10", "]r keeps the limit")
end)

T.run(":RecallRead recall:/session/… tail 3 and a bad limit", function()
  vim.cmd("RecallRead recall:/session/" .. NIGHTLY .. " tail 3")
  T.eq(range(T.wait_loaded()), "8–10", "tail window")
  vim.cmd("RecallRead " .. NIGHTLY .. " head five")
  T.contains(T.messages[#T.messages].msg, "limit must be a number", "a bad limit is refused")
end)

T.run("hover on a session id inside a transcript", function()
  vim.cmd("RecallRead " .. AUDIT)
  local buf = T.wait_loaded()
  local c = require("recall.client").current()
  T.wait(5000, function()
    return vim.lsp.buf_is_attached(buf, c.id)
  end, "the transcript attached (the server gets its text)")
  local row
  for i, l in ipairs(T.lines(buf)) do
    if l:find(CHILD, 1, true) then
      row = i
      break
    end
  end
  T.ok(row, "the child session's id is in the transcript")
  vim.api.nvim_win_set_cursor(0, { row, T.lines(buf)[row]:find(CHILD, 1, true) + 3 })
  vim.lsp.buf.hover()
  local w, text
  T.wait(10000, function()
    w, text = float()
    return w ~= nil
  end, "a hover float in the transcript")
  T.contains(text, "Audit currency handling (@explore subagent)", "the child session's title")
  T.contains(text, "recall:/session/" .. CHILD, "its transcript link")
end)

T.run("K twice enters the hover, <CR> on its link opens the transcript", function()
  -- The float from the last case is open; the same call again enters it.
  vim.lsp.buf.hover()
  T.wait(5000, function()
    return vim.api.nvim_win_get_config(0).relative ~= ""
  end, "the cursor in the hover float")
  T.ok(vim.fn.search("Open transcript") > 0, "the link in the float")
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "mx", false)
  local buf = T.wait_loaded()
  T.eq(vim.api.nvim_win_get_config(0).relative, "", "back in a normal window")
  T.contains(vim.api.nvim_buf_get_name(buf), "recall://session/" .. CHILD, "the linked transcript")
  T.contains(T.lines(buf)[1], "Audit currency handling (@explore subagent)", "its heading")
  close_floats()
end)

T.run("gx on a link in a file buffer's hover works too", function()
  vim.cmd("enew")
  vim.bo.buftype = "nofile"
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { "see " .. NIGHTLY })
  vim.cmd("RecallAttach")
  local c = require("recall.client").current()
  T.wait(5000, function()
    return vim.lsp.buf_is_attached(0, c.id)
  end, "attached")
  vim.api.nvim_win_set_cursor(0, { 1, 8 })
  vim.lsp.buf.hover()
  T.wait(10000, function()
    return float() ~= nil
  end, "a hover float")
  vim.lsp.buf.hover()
  T.wait(5000, function()
    return vim.api.nvim_win_get_config(0).relative ~= ""
  end, "the cursor in the hover float")
  vim.api.nvim_feedkeys("gx", "mx", false)
  local buf = T.wait_loaded()
  -- the server's URI names the session, then a title slug and the source
  local name = vim.api.nvim_buf_get_name(buf)
  T.ok(vim.startswith(name, "recall://session/" .. NIGHTLY), "the linked transcript: got " .. name)
end)

T.run(":help recall lands on the introduction", function()
  -- The plugin's own help file (run.sh may point the runtimepath at
  -- another copy of the plugin).
  local doc = vim.fn.fnamemodify(vim.api.nvim_get_runtime_file("doc/recall.txt", false)[1], ":h")
  local rt = T.env.tmp .. "/helprt"
  vim.fn.mkdir(rt .. "/doc", "p")
  vim.fn.writefile(vim.fn.readfile(doc .. "/recall.txt"), rt .. "/doc/recall.txt")
  vim.cmd("helptags " .. vim.fn.fnameescape(rt .. "/doc"))
  vim.opt.runtimepath:prepend(rt)
  vim.cmd("help recall")
  T.eq(vim.bo.buftype, "help", "a help window")
  T.contains(vim.api.nvim_get_current_line(), "INTRODUCTION", "the line :help recall lands on")
  vim.cmd("help recall-setup")
  T.contains(vim.api.nvim_get_current_line(), "SETUP", "recall-setup")
  vim.cmd("helpclose")
end)

T.finish()
