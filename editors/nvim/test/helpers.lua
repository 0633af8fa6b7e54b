-- Test helpers for the headless specs (loaded with dofile by each spec).
--
-- A spec is plain Lua run by `nvim --headless -u NONE -c "luafile <spec>"`:
-- it calls T.run(name, fn) for each case; T.finish() exits with `qa!` when
-- every case passed and `cq 1` otherwise, so the shell sees the result.
local T = { failures = 0, passed = 0, notes = {} }

local function out(s)
  io.stdout:write(s .. "\n")
  io.stdout:flush()
end
T.out = out

T.env = {
  bin = assert(os.getenv("RECALL_TEST_BIN"), "RECALL_TEST_BIN is not set (run test/run.sh)"),
  db = assert(os.getenv("RECALL_TEST_DB"), "RECALL_TEST_DB is not set"),
  index = assert(os.getenv("RECALL_TEST_INDEX"), "RECALL_TEST_INDEX is not set"),
  tmp = assert(os.getenv("RECALL_TEST_TMP"), "RECALL_TEST_TMP is not set"),
}

-- Headless Neovim is 80 columns wide; the specs assert on picker labels
-- that the plugin clips to the width, so give them a common terminal's.
vim.o.columns = 160
vim.o.lines = 40

-- Everything the plugin says through vim.notify, for assertions and for
-- the failure report.
T.messages = {}
vim.notify = function(msg, level)
  table.insert(T.messages, { msg = tostring(msg), level = level or vim.log.levels.INFO })
end

-- vim.ui.select / vim.ui.input are Neovim's UI hooks; the tests stand in for
-- the user: they record what would be shown and choose.
T.select = nil
T.select_count = 0
T.builtin_select = vim.ui.select
vim.ui.select = function(items, opts, on_choice)
  T.select_count = T.select_count + 1
  local labels = {}
  for i, item in ipairs(items) do
    labels[i] = opts.format_item and opts.format_item(item) or tostring(item)
  end
  T.select = { items = items, labels = labels, opts = opts, choose = on_choice }
end
T.input_answer = nil
T.input_prompt = nil
vim.ui.input = function(opts, on_confirm)
  T.input_prompt = opts.prompt
  on_confirm(T.input_answer)
end

function T.setup(opts)
  return require("recall").setup(vim.tbl_extend("force", {
    cmd = { T.env.bin, "lsp", "--log-file", T.env.tmp .. "/lsp.log" },
    db = T.env.db,
    index = T.env.index,
    init_options = { watch = false },
  }, opts or {}))
end

local Fail = {}

function T.fail(msg)
  error(setmetatable({ msg = msg }, Fail), 2)
end

-- A command that "returns at once" returns within this. The defect it
-- catches held the editor ~15 s (a synchronous request waiting for the
-- server); a loaded 2-core machine takes a few hundred ms to spawn a
-- process, so the bound sits between the two.
T.AT_ONCE_MS = 1000

function T.ok(cond, msg)
  if not cond then
    T.fail(msg)
  end
  return cond
end

function T.eq(got, want, what)
  if got ~= want then
    T.fail(string.format("%s: got %s, want %s", what, vim.inspect(got), vim.inspect(want)))
  end
end

function T.contains(haystack, needle, what)
  if type(haystack) == "table" then
    haystack = table.concat(haystack, "\n")
  end
  if not tostring(haystack):find(needle, 1, true) then
    T.fail(string.format("%s: %q not found in:\n%s", what, needle, tostring(haystack):sub(1, 2000)))
  end
end

-- wait polls cond (up to ms) while Neovim runs its event loop.
function T.wait(ms, cond, what)
  if not vim.wait(ms, cond, 20) then
    T.fail(string.format("timed out after %d ms waiting for %s", ms, what))
  end
end

-- wait_select waits for the next picker, clears it and returns it.
function T.wait_select(ms, what)
  T.wait(ms, function()
    return T.select ~= nil
  end, what or "a picker")
  local s = T.select
  T.select = nil
  return s
end

function T.find_label(sel, needle)
  for i, label in ipairs(sel.labels) do
    if label:find(needle, 1, true) then
      return i, sel.items[i], label
    end
  end
  T.fail(string.format("no picker item contains %q; items:\n  %s", needle, table.concat(sel.labels, "\n  ")))
end

-- wait_loaded waits until a recall: transcript buffer has its text (the
-- plugin loads them without blocking) and returns it.
function T.wait_loaded(bufnr, ms)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  T.wait(ms or 15000, function()
    return vim.api.nvim_buf_is_valid(bufnr) and vim.b[bufnr].recall ~= nil
  end, "transcript " .. vim.api.nvim_buf_get_name(bufnr) .. " to load")
  return bufnr
end

-- messages is what :messages holds now.
function T.messages_text()
  return vim.fn.execute("messages")
end

-- Words that must never reach the user: a Lua stack trace, or Neovim
-- telling them the plugin uses a deprecated API.
local BAD = { "deprecated", "stack traceback", "E5108", "Keyboard interrupt" }

local checked_upto = 0
local function bad_output()
  local found = {}
  local text = T.messages_text()
  local new = text:sub(checked_upto + 1)
  checked_upto = #text
  for _, m in ipairs(T.messages) do
    new = new .. "\n" .. m.msg
  end
  for _, word in ipairs(BAD) do
    if new:find(word, 1, true) then
      table.insert(found, word)
    end
  end
  return #found > 0 and (table.concat(found, ", ") .. " in:\n" .. new) or nil
end

function T.lines(bufnr)
  return vim.api.nvim_buf_get_lines(bufnr or 0, 0, -1, false)
end

function T.run(name, fn)
  local start = (vim.uv or vim.loop).hrtime()
  local ok, err = xpcall(fn, function(e)
    if getmetatable(e) == Fail then
      return e.msg .. "\n" .. debug.traceback("", 2):gsub("\n[^\n]*helpers%.lua[^\n]*", "")
    end
    return tostring(e) .. "\n" .. debug.traceback("", 2)
  end)
  local ms = ((vim.uv or vim.loop).hrtime() - start) / 1e6
  if ok and not T.allow_bad then
    local bad = bad_output()
    if bad then
      ok, err = false, "the user saw " .. bad
    end
  end
  T.allow_bad = nil
  if ok then
    T.passed = T.passed + 1
    out(string.format("  ok   %s (%.0f ms)", name, ms))
  else
    T.failures = T.failures + 1
    out(string.format("  FAIL %s (%.0f ms)\n    %s", name, ms, err:gsub("\n", "\n    ")))
    if #T.messages > 0 then
      out("    notifications:")
      for _, m in ipairs(T.messages) do
        out("      [" .. tostring(m.level) .. "] " .. m.msg)
      end
    end
  end
  T.messages = {}
end

function T.finish()
  out(string.format("%d passed, %d failed", T.passed, T.failures))
  -- A clean shutdown (shutdown + exit), so the server's log says so.
  pcall(function()
    local c = require("recall.client").current()
    require("recall.client").stop()
    if c then
      vim.wait(3000, function()
        return vim.lsp.get_client_by_id(c.id) == nil
      end, 20)
    end
  end)
  if T.failures > 0 then
    vim.cmd("cq 1")
  else
    vim.cmd("qa!")
  end
end

return T
