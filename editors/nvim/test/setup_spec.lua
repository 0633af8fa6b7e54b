-- Loading, options and failure modes.
local T = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/helpers.lua")

T.run("the plugin file defines commands without loading the module", function()
  for _, name in ipairs({ "RecallSearch", "RecallSessions", "RecallRead", "RecallFiles", "RecallAttach" }) do
    T.eq(vim.fn.exists(":" .. name), 2, ":" .. name .. " exists")
  end
  T.eq(package.loaded["recall"], nil, "require('recall') not loaded yet")
  T.eq(#vim.api.nvim_get_autocmds({ event = "BufReadCmd", pattern = "recall:/*" }), 1, "recall:/* BufReadCmd")
end)

T.run("setup rejects bad options with the option's name", function()
  local ok, err = pcall(require("recall").setup, { cmd = "recall lsp" })
  T.ok(not ok, "a string cmd is refused")
  T.contains(err, "option cmd must be a table", "error")
  ok, err = pcall(require("recall").setup, { picker = "fzf" })
  T.ok(not ok, "an unknown picker is refused")
  T.contains(err, "picker", "error")
  ok, err = pcall(require("recall").setup, { dbb = "/x" })
  T.ok(not ok, "a misspelt option is refused")
  T.contains(err, "unknown option dbb", "error")
end)

T.run("a missing server binary is reported, once, with the fix", function()
  require("recall").setup({ cmd = { "/nonexistent/recall", "lsp" } })
  vim.cmd("edit " .. T.env.tmp .. "/a.txt")
  vim.cmd("edit " .. T.env.tmp .. "/b.txt")
  vim.wait(200)
  local errors = vim.tbl_filter(function(m)
    return m.level == vim.log.levels.ERROR
  end, T.messages)
  T.eq(#errors, 1, "error notifications")
  T.contains(errors[1].msg, "/nonexistent/recall", "names the command")
  T.contains(errors[1].msg, "setup{ cmd", "says how to fix it")
  vim.cmd("RecallSearch anything")
  vim.wait(200)
  T.contains(T.messages[#T.messages].msg, "cannot start the server", "a command says so too")
end)

T.run("autostart = false attaches nothing; commands still start the server", function()
  require("recall")._start_failed = nil
  T.setup({ autostart = false })
  vim.cmd("edit " .. T.env.tmp .. "/c.txt")
  vim.wait(200)
  T.eq(require("recall.client").current(), nil, "no client after opening a file")
  vim.cmd("RecallSessions")
  local sel = T.wait_select(15000, "the sessions picker")
  T.ok(#sel.items > 0, "sessions")
  local c = require("recall.client").current()
  T.ok(c, "a client")
  T.ok(not vim.lsp.buf_is_attached(0, c.id), "the file buffer is not attached")
end)

T.run("filetypes limits the buffers attached", function()
  T.setup({ filetypes = { "python" } })
  vim.cmd("edit " .. T.env.tmp .. "/d.txt")
  vim.cmd("edit " .. T.env.tmp .. "/e.py")
  local py = vim.api.nvim_get_current_buf()
  vim.cmd("filetype on")
  vim.cmd("setfiletype python")
  local c = require("recall.client").current()
  T.wait(5000, function()
    return vim.lsp.buf_is_attached(py, c.id)
  end, "the python buffer attached")
  T.ok(not vim.lsp.buf_is_attached(vim.fn.bufnr(T.env.tmp .. "/d.txt"), c.id), "the text buffer is not attached")
  T.eq(#vim.tbl_filter(function(x) return x.name == "recall" end, (vim.lsp.get_clients or vim.lsp.get_active_clients)()), 1, "one recall client")
end)

T.run("the initializationOptions carry db and index", function()
  local c = require("recall.client").current()
  T.eq(c.config.init_options.db, T.env.db, "db")
  T.eq(c.config.init_options.index, T.env.index, "index")
  local status = require("recall.client").request_sync("recall/status", {})
  T.ok(status, "recall/status")
  T.contains(vim.inspect(status.source), "opencode.db", "status source")
end)

T.run("picker = telescope drives Telescope's picker API", function()
  -- Telescope is not installed here: a stand-in records the calls its
  -- documented developer API (pickers.new, finders.new_table, previewers.
  -- new_buffer_previewer, actions.select_default:replace) receives.
  local seen = {}
  local selected
  package.loaded["telescope.pickers"] = {
    new = function(_, spec)
      seen.spec = spec
      return { find = function() seen.found = true end }
    end,
  }
  package.loaded["telescope.finders"] = { new_table = function(t) seen.finder = t; return t end }
  package.loaded["telescope.previewers"] = { new_buffer_previewer = function(t) seen.previewer = t; return t end }
  package.loaded["telescope.config"] = { values = { generic_sorter = function() return "sorter" end } }
  package.loaded["telescope.actions"] = {
    select_default = { replace = function(_, fn) seen.on_select = fn end },
    close = function() seen.closed = true end,
  }
  package.loaded["telescope.actions.state"] = { get_selected_entry = function() return selected end }
  T.setup({ picker = "telescope" })
  require("recall").search("ERR_QUOTA_7731")
  T.wait(15000, function() return seen.found end, "a Telescope picker")
  local entry = seen.finder.entry_maker(seen.finder.results[1])
  T.contains(entry.display, "Investigate nightly worker failure", "entry display")
  T.contains(entry.ordinal, "ERR_QUOTA_7731", "entry ordinal")
  local pbuf = vim.api.nvim_create_buf(false, true)
  seen.previewer.define_preview({ state = { bufnr = pbuf } }, entry)
  T.contains(T.lines(pbuf), "# Investigate nightly worker failure", "preview")
  T.ok(seen.spec.attach_mappings(0) == true, "attach_mappings keeps the default mappings")
  selected = entry
  seen.on_select()
  T.ok(seen.closed, "the picker closed")
  T.wait_loaded()
  T.contains(vim.api.nvim_buf_get_name(0), "recall://session/ses_dd7571907ffe5vPpW7vxTE77tW", "the hit opened")
  for k in pairs(package.loaded) do
    if k:find("^telescope") then package.loaded[k] = nil end
  end
end)

T.run("the help file has its tags", function()
  local doc = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h:h") .. "/doc"
  local tmpdoc = T.env.tmp .. "/doc"
  vim.fn.mkdir(tmpdoc, "p")
  vim.fn.writefile(vim.fn.readfile(doc .. "/recall.txt"), tmpdoc .. "/recall.txt")
  vim.cmd("helptags " .. vim.fn.fnameescape(tmpdoc))
  local tags = table.concat(vim.fn.readfile(tmpdoc .. "/tags"), "\n")
  for _, tag in ipairs({ "recall.txt", ":RecallSearch", ":RecallSessions", ":RecallRead", "recall-setup" }) do
    T.contains(tags, tag .. "\t", "tags")
  end
end)

T.finish()
