-- Code lens on a file past sessions touched, and recall.showFileSessions.
local T = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/helpers.lua")
T.setup()

-- The fixture's sessions edited this file (L1 and its fork L5). It need not
-- exist: RECALL_TEST_LENS_FILE points at a copy run.sh made when it could.
local FILE = os.getenv("RECALL_TEST_LENS_FILE") or "/tmp/ocgen/recall-v1/projects/ledger/ledger/invoices.py"

local function lens_text(buf)
  local texts = {}
  for _, ns in pairs(vim.api.nvim_get_namespaces()) do
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
      for _, chunk in ipairs((m[4] or {}).virt_text or {}) do
        table.insert(texts, chunk[1])
      end
    end
  end
  return table.concat(texts, " | ")
end

-- Neovim 0.12 keeps lenses itself once enabled per buffer (get() takes a
-- filter there; the number form is deprecated) and draws them as virtual
-- lines from a decoration provider, which only runs with a UI attached:
-- the drawing on 0.12 is checked on a real screen by tui_spec.sh.
local has012 = vim.lsp.codelens.enable ~= nil

local function lenses(b)
  if has012 then
    return vim.tbl_map(function(r)
      return r.lens
    end, vim.lsp.codelens.get({ bufnr = b }))
  end
  return vim.lsp.codelens.get(b)
end

local buf

T.run("a lens shows on a file past sessions touched", function()
  vim.cmd("edit " .. vim.fn.fnameescape(FILE))
  buf = vim.api.nvim_get_current_buf()
  T.wait(20000, function()
    return #lenses(buf) > 0
  end, "code lenses on " .. FILE)
  local lens = lenses(buf)[1]
  T.eq(lens.range.start.line, 0, "lens line")
  T.eq(lens.command.title, "2 past sessions touched this file", "lens title")
  T.eq(lens.command.command, "recall.showFileSessions", "lens command")
  T.eq(lens.command.arguments[1].total, 2, "lens argument total")
  if has012 then
    T.ok(vim.lsp.codelens.is_enabled({ bufnr = buf }), "lenses enabled for the buffer (0.12)")
    return
  end
  T.wait(2000, function()
    return lens_text(buf):find("past sessions", 1, true) ~= nil
  end, "the lens drawn as virtual text")
end)

T.run("running the lens picks among those sessions", function()
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  vim.lsp.codelens.run()
  local sel = T.wait_select(15000, "the file's sessions picker")
  T.eq(#sel.items, 2, "sessions in the picker")
  T.contains(sel.opts.prompt, "2 sessions touched", "prompt")
  T.find_label(sel, "Fix invoice total rounding drift (fork #1)")
  local i, s = T.find_label(sel, "Fix invoice total rounding drift  (")
  sel.choose(s, i)
  local tb = T.wait_loaded()
  T.eq(vim.api.nvim_buf_get_name(tb), "recall://session/ses_dd7574300ffeDSAKd7MCEMAuWS", "transcript opened")
  T.contains(T.lines(tb), "normalize_invoice_totals", "transcript text")
end)

T.run("lenses are drawn again on BufEnter and InsertLeave", function()
  if has012 then
    -- Lenses switched off for the buffer come back through the plugin's
    -- BufEnter / InsertLeave refresh.
    for _, event in ipairs({ "BufEnter", "InsertLeave" }) do
      vim.lsp.codelens.enable(false, { bufnr = buf })
      T.eq(#lenses(buf), 0, "lenses after disabling them")
      if event == "BufEnter" then
        vim.cmd("enew")
        vim.cmd("buffer " .. buf)
      else
        vim.cmd("doautocmd InsertLeave")
      end
      T.wait(10000, function()
        return #lenses(buf) > 0
      end, "lenses after " .. event)
    end
    return
  end
  local function wipe()
    for name, ns in pairs(vim.api.nvim_get_namespaces()) do
      if name:find("codelens", 1, true) then
        vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
      end
    end
    T.eq(lens_text(buf), "", "lens text after wiping it")
  end
  wipe()
  vim.cmd("enew")
  vim.cmd("buffer " .. buf)
  T.wait(10000, function()
    return lens_text(buf):find("past sessions", 1, true) ~= nil
  end, "lenses after BufEnter")
  wipe()
  vim.cmd("doautocmd InsertLeave")
  T.wait(10000, function()
    return lens_text(buf):find("past sessions", 1, true) ~= nil
  end, "lenses after InsertLeave")
end)

T.run(":RecallFiles lists the current file's sessions", function()
  vim.cmd("RecallFiles")
  local sel = T.wait_select(15000, "the file's sessions picker")
  T.eq(#sel.items, 2, "sessions")
end)

T.run("no lens on a file no session touched", function()
  vim.cmd("edit " .. T.env.tmp .. "/untouched.py")
  local other = vim.api.nvim_get_current_buf()
  T.wait(10000, function()
    local c = require("recall.client").current()
    return c and vim.lsp.buf_is_attached(other, c.id)
  end, "attach")
  vim.wait(500)
  T.eq(#lenses(other), 0, "lenses on an untouched file")
end)

T.finish()
