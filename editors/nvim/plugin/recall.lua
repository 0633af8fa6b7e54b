-- Commands and recall:// buffers. Nothing is loaded or started until one is
-- used; require("recall").setup{} adds attaching to file buffers.
if vim.g.loaded_recall == 1 or vim.fn.has("nvim-0.7") ~= 1 then
  return
end
vim.g.loaded_recall = 1

local function recall()
  return require("recall")
end

local command = vim.api.nvim_create_user_command

command("RecallSearch", function(o)
  recall().search(o.args ~= "" and o.args or nil)
end, { nargs = "*", desc = "Recall: search past OpenCode sessions" })

command("RecallSessions", function(o)
  recall().sessions(o.args)
end, { nargs = "*", desc = "Recall: list past sessions (optional title filter)" })

command("RecallRead", function(o)
  recall().read(o.fargs[1], o.fargs[2], o.fargs[3])
end, {
  nargs = "+",
  desc = "Recall: open the transcript window of a cursor [mode] [limit]",
  complete = function(lead, line)
    if #vim.split(line, "%s+") == 3 then
      return vim.tbl_filter(function(m)
        return m:find(lead, 1, true) == 1
      end, { "around", "next", "prev", "head", "tail", "full" })
    end
    return {}
  end,
})

command("RecallFiles", function(o)
  recall().file_sessions(o.args)
end, { nargs = "?", complete = "file", desc = "Recall: past sessions that touched a file (default: this one)" })

command("RecallBlame", function()
  recall().blame(0)
end, { desc = "Recall: show (or hide) which past session wrote each line of this buffer" })

command("RecallBlameOpen", function()
  require("recall.blame").open_line()
end, { desc = "Recall: open the transcript at the message that wrote this line" })

command("RecallCite", function(o)
  recall().cite(o.args)
end, { nargs = "?", desc = "Recall: copy a one-line citation of this transcript's message (or a ses_/msg_ id)" })

command("RecallResume", function(o)
  recall().resume(o.args)
end, { nargs = "?", desc = "Recall: continue this transcript's session in OpenCode, in a terminal" })

command("RecallNext", function()
  require("recall.blame").jump(1)
end, { desc = "Recall: next hit of the search query in this transcript" })

command("RecallPrev", function()
  require("recall.blame").jump(-1)
end, { desc = "Recall: previous hit of the search query in this transcript" })

command("RecallAttach", function()
  recall().attach(0)
end, { desc = "Recall: attach the server to this buffer (hover, code lens)" })

command("RecallRestart", function()
  recall().restart()
end, { desc = "Recall: restart the server (after a failed start or a new binary)" })

vim.api.nvim_create_autocmd("BufReadCmd", {
  group = vim.api.nvim_create_augroup("RecallTranscripts", { clear = true }),
  -- Also matches recall://…; recall:/session/… are the server's own URIs.
  pattern = "recall:/*",
  callback = function(args)
    require("recall.transcript").load(args.buf, args.match)
  end,
})
