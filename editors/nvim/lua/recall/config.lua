-- Options of require("recall").setup{}; see :help recall-setup.
local M = {}

M.defaults = {
  -- How to run the server. The first item must be an executable.
  cmd = { "recall", "lsp" },
  -- OpenCode database or data dir (initializationOptions.db). nil: the
  -- server's own discovery (OPENCODE_DB, $XDG_DATA_HOME/opencode/opencode.db).
  db = nil,
  -- Recall's index file (initializationOptions.index). nil: the server default.
  index = nil,
  -- More initializationOptions (excludeSession, watch); db/index win.
  init_options = {},
  -- Attach the client to normal file buffers as they open, so hover and
  -- code lenses work there. false: the server starts on the first command.
  autostart = true,
  -- Filetypes to attach to; nil attaches to every normal file buffer.
  filetypes = nil,
  -- Refresh code lenses ("N past sessions touched this file").
  codelens = true,
  -- Map K to vim.lsp.buf.hover() in attached buffers that have no K mapping
  -- of their own (Neovim < 0.10; 0.10+ maps K itself).
  keymaps = true,
  -- "auto" (Telescope when installed, else vim.ui.select), "telescope", "select".
  picker = "auto",
  -- How transcripts open: "edit", "split", "vsplit" or "tabedit".
  open = "edit",
  -- Hits per :RecallSearch, sessions per :RecallSessions page.
  search_limit = 50,
  sessions_limit = 50,
  -- How long a transcript read or the server's initialize may take.
  timeout_ms = 15000,
  -- The OpenCode executable :RecallResume runs (nil: "opencode" on the PATH).
  resume_cmd = nil,
}

M.options = vim.deepcopy(M.defaults)

-- The expected type of each option (own checks: vim.validate's table form
-- is deprecated on newer Neovim and absent in its new form on 0.7).
local types = {
  cmd = "table", db = "string?", index = "string?", init_options = "table",
  autostart = "boolean", filetypes = "table?", codelens = "boolean",
  keymaps = "boolean", picker = "string", open = "string",
  search_limit = "number", sessions_limit = "number", timeout_ms = "number",
  resume_cmd = "string?",
}

local function check(opts)
  for key, want in pairs(types) do
    local optional = want:sub(-1) == "?"
    local t = optional and want:sub(1, -2) or want
    local v = opts[key]
    if not (type(v) == t or (optional and v == nil)) then
      error(string.format("recall.setup: option %s must be a %s, got %s", key, want, type(v)), 3)
    end
  end
  for key in pairs(opts) do
    if types[key] == nil then
      error(string.format("recall.setup: unknown option %s (see :help recall-setup)", key), 3)
    end
  end
  if not vim.tbl_contains({ "auto", "telescope", "select" }, opts.picker) then
    error('recall.setup: option picker must be "auto", "telescope" or "select"', 3)
  end
  if type(opts.cmd[1]) ~= "string" then
    error('recall.setup: option cmd must start with the executable, e.g. { "recall", "lsp" }', 3)
  end
end

function M.set(opts)
  local merged = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts or {})
  -- Lists replace, they do not merge by index.
  if opts and opts.cmd then
    merged.cmd = opts.cmd
  end
  if opts and opts.filetypes then
    merged.filetypes = opts.filetypes
  end
  check(merged)
  M.options = merged
  return merged
end

return M
