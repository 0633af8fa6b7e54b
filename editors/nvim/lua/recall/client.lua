-- The one `recall lsp` client of this Neovim, across Neovim versions.
--
-- Neovim 0.7 only has vim.lsp.start_client + vim.lsp.buf_attach_client;
-- 0.8 added vim.lsp.start (which reuses a running client); 0.11 turned the
-- client's functions into methods (client:request) and added
-- vim.lsp.start{attach = false}. Everything version-dependent lives here.
local config = require("recall.config")

local M = {}

local has08 = vim.fn.has("nvim-0.8") == 1
local has011 = vim.fn.has("nvim-0.11") == 1

M.name = "recall"

local client_id -- the client we started (or reused), if any

-- call runs a client function in the calling convention of this Neovim.
local function call(client, fn, ...)
  if has011 then
    return client[fn](client, ...)
  end
  return client[fn](...)
end
M.call = call

local function alive(client)
  if not client then
    return false
  end
  local ok, stopped = pcall(call, client, "is_stopped")
  return not (ok and stopped)
end

-- All vim.lsp versions agree on this one: a running client is reused by name,
-- whatever buffer or directory asked for it (the history is per user, not
-- per project).
local function reuse(client, conf)
  return client.name == conf.name and alive(client)
end

-- current is the running client, or nil.
function M.current()
  local client = client_id and vim.lsp.get_client_by_id(client_id)
  if alive(client) then
    return client
  end
  client_id = nil
  return nil
end

local function executable_or_error()
  local cmd = config.options.cmd
  local exe = type(cmd) == "table" and cmd[1] or nil
  if type(exe) ~= "string" or vim.fn.executable(exe) ~= 1 then
    return string.format(
      "Recall: cannot start the server: %s is not an executable; install recall or pass setup{ cmd = { '/path/to/recall', 'lsp' } }",
      vim.inspect(exe)
    )
  end
  return nil
end

local function client_config()
  local o = config.options
  local init = vim.tbl_extend("force", {}, o.init_options or {})
  init.db = o.db or init.db
  init.index = o.index or init.index
  local handlers = require("recall.handlers")
  return {
    name = M.name,
    cmd = o.cmd,
    -- Not a workspace server: no root_dir, the history is the user's.
    init_options = init,
    commands = handlers.commands,
    handlers = handlers.lsp_handlers,
    on_attach = handlers.on_attach,
    -- Build the index once in the background if it never was, then show
    -- the lenses it makes possible (hovers and lenses read the index only).
    on_init = function(client)
      vim.schedule(function()
        M.first_sync(client, function()
          handlers.refresh_codelens()
        end)
      end)
    end,
    flags = { debounce_text_changes = 150 },
  }
end

local function remember(id)
  if id then
    client_id = id
  end
  return M.current()
end

-- ensure returns the client, starting it (unattached) when none runs.
-- Returns nil and an error message when the server cannot be started.
function M.ensure()
  local client = M.current()
  if client then
    return client
  end
  local err = executable_or_error()
  if err then
    return nil, err
  end
  local conf = client_config()
  local ok, id
  if has011 then
    ok, id = pcall(vim.lsp.start, conf, { attach = false, reuse_client = reuse })
  else
    -- A client that vim.lsp.start made for a buffer is reused (0.8-0.10).
    for _, c in ipairs(vim.lsp.get_active_clients()) do
      if reuse(c, conf) then
        return remember(c.id)
      end
    end
    ok, id = pcall(vim.lsp.start_client, conf)
  end
  if not ok or not id then
    return nil, "Recall: starting " .. table.concat(conf.cmd, " ") .. " failed: " .. tostring(id)
  end
  return remember(id)
end

-- attach starts (or reuses) the client for bufnr and attaches it.
function M.attach(bufnr)
  local existing = M.current()
  if existing and vim.lsp.buf_is_attached(bufnr, existing.id) then
    return existing
  end
  if has08 then
    local err = executable_or_error()
    if err then
      return nil, err
    end
    local id
    -- vim.lsp.start attaches the current buffer (opts.bufnr is 0.9+).
    vim.api.nvim_buf_call(bufnr, function()
      id = vim.lsp.start(client_config(), { reuse_client = reuse, bufnr = bufnr })
    end)
    return remember(id)
  end
  local client, err = M.ensure()
  if not client then
    return nil, err
  end
  vim.lsp.buf_attach_client(bufnr, client.id)
  return client
end

-- ready waits (up to timeout_ms) for the server to answer initialize.
function M.ready(timeout_ms)
  local client, err = M.ensure()
  if not client then
    return nil, err
  end
  if not client.initialized then
    vim.wait(timeout_ms or config.options.timeout_ms, function()
      return client.initialized or not alive(client)
    end, 10)
  end
  if not client.initialized then
    return nil, "Recall: the server did not finish initialize; see :LspLog (is the history readable?)"
  end
  return client
end

local function message_of(err)
  if type(err) == "table" then
    return err.message or vim.inspect(err)
  end
  return tostring(err)
end
M.message_of = message_of

-- Lua's {} would go out as a JSON array; the server wants an object.
local function object(params)
  if params == nil or (type(params) == "table" and next(params) == nil) then
    return vim.empty_dict()
  end
  return params
end

-- The server answers from its index. On a first start, the watcher's
-- initial sync may still be running and a search would find nothing: the
-- first request that reads history waits for one sync to finish.
local reads_history = {
  ["recall/search"] = true,
  ["recall/sessions"] = true,
  ["recall/files"] = true,
  ["recall/read"] = true,
  ["recall/transcript"] = true,
  ["workspace/symbol"] = true,
}
local indexed = {} -- client id -> true once the index is known to be built

local FIRST_SYNC_NOTICE = "Recall: indexing your OpenCode history for the first time…"

local function synced(status)
  return type(status) == "table" and type(status.freshness) == "table" and status.freshness.syncedAt ~= nil
end

local waiting = {} -- client id -> continuations while the first sync runs

function M.first_sync(client, cont)
  local id = client.id
  if indexed[id] then
    return cont()
  end
  if waiting[id] then
    table.insert(waiting[id], cont)
    return
  end
  waiting[id] = { cont }
  local function done()
    indexed[id] = true
    local conts = waiting[id] or {}
    waiting[id] = nil
    for _, f in ipairs(conts) do
      f()
    end
  end
  call(client, "request", "recall/status", vim.empty_dict(), function(err, status)
    if err or synced(status) then
      return done()
    end
    vim.notify(FIRST_SYNC_NOTICE, vim.log.levels.INFO)
    call(client, "request", "recall/sync", vim.empty_dict(), done)
  end)
end

local function first_sync_blocking(client, timeout_ms)
  if indexed[client.id] then
    return
  end
  if waiting[client.id] then
    vim.wait(timeout_ms * 4, function()
      return indexed[client.id] == true
    end, 10)
    return
  end
  local res = call(client, "request_sync", "recall/status", vim.empty_dict(), timeout_ms)
  if res and not res.err and not synced(res.result) then
    vim.notify(FIRST_SYNC_NOTICE, vim.log.levels.INFO)
    call(client, "request_sync", "recall/sync", vim.empty_dict(), timeout_ms * 4)
  end
  indexed[client.id] = true
end

-- request sends a request and calls cb(err_message, result) on the main loop.
function M.request(method, params, cb)
  local client, err = M.ready()
  if not client then
    cb(err)
    return
  end
  local function send()
    local ok = call(client, "request", method, object(params), function(rpc_err, result)
      if rpc_err then
        cb("Recall: " .. method .. ": " .. message_of(rpc_err))
      else
        cb(nil, result)
      end
    end)
    if not ok then
      cb("Recall: " .. method .. ": the server is not running")
    end
  end
  if reads_history[method] then
    M.first_sync(client, send)
  else
    send()
  end
end

-- request_sync waits for the answer (for BufReadCmd, which must fill the
-- buffer before :edit returns). Returns result or nil, err_message.
function M.request_sync(method, params, timeout_ms)
  local client, err = M.ready()
  if not client then
    return nil, err
  end
  timeout_ms = timeout_ms or config.options.timeout_ms
  if reads_history[method] then
    first_sync_blocking(client, timeout_ms)
  end
  local res, why = call(client, "request_sync", method, object(params), timeout_ms)
  if not res then
    return nil, "Recall: " .. method .. ": " .. tostring(why or "no answer")
  end
  if res.err then
    return nil, "Recall: " .. method .. ": " .. message_of(res.err)
  end
  return res.result
end

function M.stop()
  local client = M.current()
  if client then
    call(client, "stop")
  end
  client_id = nil
end

return M
