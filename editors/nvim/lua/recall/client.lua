-- The one `recall lsp` client of this Neovim, across Neovim versions.
--
-- Neovim 0.7 only has vim.lsp.start_client + vim.lsp.buf_attach_client;
-- 0.8 added vim.lsp.start (which reuses a running client); 0.11 turned the
-- client's functions into methods (client:request) and added
-- vim.lsp.start{attach = false}. Everything version-dependent lives here.
--
-- Nothing here waits on the server: requests queue until the server has
-- answered initialize and their callbacks run when the answer comes, so a
-- slow first start (indexing) or a server that failed never freezes the
-- editor. A failed start is remembered with the server's own words and
-- every later request gets that message at once.
local config = require("recall.config")

local M = {}

local has08 = vim.fn.has("nvim-0.8") == 1
local has010 = vim.fn.has("nvim-0.10") == 1
local has011 = vim.fn.has("nvim-0.11") == 1
local uv = vim.uv or vim.loop

M.name = "recall"

local client_id -- the client we started (or reused), if any

-- Per client id: { waiters = {fn…}, failed = message|nil }.
local states = {}

-- failure is why the last start failed (the server's own message when it
-- sent one); later requests say it at once instead of starting again.
-- setup() and :RecallRestart clear it.
local failure

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
  local st = states[client.id]
  return client.name == conf.name and alive(client) and not (st and st.stopping)
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

-- ready_client is the running client once it answered initialize.
function M.ready_client()
  local client = M.current()
  if client and client.initialized then
    return client
  end
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

-- A db option that names nothing is the most common setup mistake; saying
-- so here spares the user Neovim's own initialize-error dump.
local function db_or_error()
  local db = config.options.db or (config.options.init_options or {}).db
  if type(db) == "string" and db ~= "" and not uv.fs_stat(vim.fn.expand(db)) then
    return string.format("Recall: setup option db = %q does not exist; pass the path of OpenCode's opencode.db (or its data dir), or leave db unset", db)
  end
  return nil
end

-- init_options is what goes out as initializationOptions. An empty Lua
-- table would be encoded as [] (Neovim cannot tell an empty list from an
-- empty map); servers before issue 14 refused that, so an empty set is sent
-- as {}.
function M.init_options()
  local o = config.options
  local init = vim.tbl_extend("force", {}, o.init_options or {})
  if o.db then
    init.db = vim.fn.expand(o.db)
  end
  if o.index then
    init.index = vim.fn.expand(o.index)
  end
  if next(init) == nil then
    return vim.empty_dict()
  end
  return init
end

local function state(id)
  states[id] = states[id] or { waiters = {} }
  return states[id]
end

-- settle runs the waiters of client id with (client) or (nil, err).
local function settle(id, client, err)
  local st = state(id)
  local waiters = st.waiters
  st.waiters = {}
  if st.timer then
    st.timer:stop()
    st.timer:close()
    st.timer = nil
  end
  if client then
    st.ready = true
  end
  for _, w in ipairs(waiters) do
    w(client, err)
  end
end

local function message_of(err)
  if type(err) == "table" then
    return err.message or vim.inspect(err)
  end
  return tostring(err)
end
M.message_of = message_of

-- A server that answers initialize with an error is asserted on inside a
-- vim.schedule callback by every Neovim from 0.7 to 0.12: the user gets a
-- Lua stack trace, the client stays uninitialized for good, and no
-- on_error/on_exit tells the plugin. So the plugin sees the answer first:
-- guard wraps the RPC client's request() and keeps a failed initialize
-- from Neovim, saying the server's own words instead and stopping it.
local function refused(err)
  vim.schedule(function()
    failure = "Recall: the server refused to start: " .. message_of(err)
    local id = client_id
    if not id then
      return
    end
    local st = state(id)
    st.failed, st.stopping = failure, true
    settle(id, nil, failure)
    local c = vim.lsp.get_client_by_id(id)
    if c then
      pcall(call, c, "stop", true)
    end
  end)
end

local function guard(rpc)
  local request = rpc.request
  rpc.request = function(method, params, callback, ...)
    if method == "initialize" and type(callback) == "function" then
      local answered = callback
      callback = function(err, result, ...)
        if err then
          return refused(err)
        end
        return answered(err, result, ...)
      end
    end
    return request(method, params, callback, ...)
  end
  return rpc
end

-- Neovim 0.10+ takes cmd as a function that makes the RPC client; older
-- ones call vim.lsp.rpc.start themselves, so for the duration of our own
-- start only, that function is wrapped.
local function guarded_start(start)
  if has010 then
    return start()
  end
  local rpc = require("vim.lsp.rpc")
  local original = rpc.start
  rpc.start = function(...)
    return guard(original(...))
  end
  local ok, a, b = pcall(start)
  rpc.start = original
  if not ok then
    error(a, 0)
  end
  return a, b
end

local function client_config()
  local handlers = require("recall.handlers")
  local cmd = config.options.cmd
  local conf = {
    name = M.name,
    cmd = has010 and function(dispatchers)
      return guard(vim.lsp.rpc.start(cmd, dispatchers))
    end or cmd,
    -- Not a workspace server: no root_dir, the history is the user's.
    init_options = M.init_options(),
    commands = handlers.commands,
    handlers = handlers.lsp_handlers,
    on_attach = handlers.on_attach,
    on_init = function(client)
      vim.schedule(function()
        settle(client.id, client)
        -- Build the index once in the background if it never was, then show
        -- the lenses it makes possible (hovers and lenses read the index only).
        M.first_sync(client, function()
          handlers.refresh_codelens()
        end)
      end)
    end,
    on_exit = function(code, signal, id)
      vim.schedule(function()
        local st = state(id)
        if not st.ready then
          if not st.failed and not st.stopping then
            failure = string.format(
              "Recall: the server exited (code %s%s) before it was ready; run `%s` in a terminal to see why",
              tostring(code),
              signal and signal ~= 0 and (", signal " .. signal) or "",
              table.concat(config.options.cmd, " ")
            )
            st.failed = failure
          end
          settle(id, nil, st.failed or "Recall: the server stopped")
        end
        if client_id == id then
          client_id = nil
        end
      end)
    end,
    flags = { debounce_text_changes = 150 },
  }
  return conf
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
  if failure then
    return nil, failure
  end
  local err = executable_or_error() or db_or_error()
  if err then
    return nil, err
  end
  local conf = client_config()
  local ok, id
  if has011 then
    ok, id = pcall(guarded_start, function()
      return vim.lsp.start(conf, { attach = false, reuse_client = reuse })
    end)
  else
    -- A client that vim.lsp.start made for a buffer is reused (0.8-0.10).
    for _, c in ipairs(vim.lsp.get_active_clients()) do
      if reuse(c, conf) then
        return remember(c.id)
      end
    end
    ok, id = pcall(guarded_start, function()
      return vim.lsp.start_client(conf)
    end)
  end
  if not ok or not id then
    return nil, "Recall: starting " .. table.concat(config.options.cmd, " ") .. " failed: " .. tostring(id)
  end
  return remember(id)
end

-- attach starts (or reuses) the client for bufnr and attaches it.
function M.attach(bufnr)
  local existing = M.current()
  if existing and vim.lsp.buf_is_attached(bufnr, existing.id) then
    return existing
  end
  if existing or not has08 then
    local client, err = M.ensure()
    if not client then
      return nil, err
    end
    vim.lsp.buf_attach_client(bufnr, client.id)
    return client
  end
  if failure then
    return nil, failure
  end
  local err = executable_or_error() or db_or_error()
  if err then
    return nil, err
  end
  local id
  -- vim.lsp.start attaches the current buffer (opts.bufnr is 0.9+).
  vim.api.nvim_buf_call(bufnr, function()
    id = guarded_start(function()
      return vim.lsp.start(client_config(), { reuse_client = reuse, bufnr = bufnr })
    end)
  end)
  return remember(id)
end

-- when_ready calls cb(client) once the server answered initialize, or
-- cb(nil, message) when it cannot start, failed, or has not answered within
-- timeout_ms. It never waits itself.
function M.when_ready(cb)
  local client, err = M.ensure()
  if not client then
    return cb(nil, err)
  end
  local st = state(client.id)
  if st.failed then
    return cb(nil, st.failed)
  end
  if client.initialized then
    return cb(client)
  end
  table.insert(st.waiters, cb)
  if not st.timer then
    local id = client.id
    st.timer = uv.new_timer()
    st.timer:start(config.options.timeout_ms, 0, vim.schedule_wrap(function()
      if st.timer then
        settle(id, nil, string.format(
          "Recall: the server has not answered initialize after %d ms; see its log (cmd = { 'recall', 'lsp', '--log-file', '/tmp/recall.log' }) and :LspLog",
          config.options.timeout_ms
        ))
      end
    end))
  end
end


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
  local ok = call(client, "request", "recall/status", vim.empty_dict(), function(err, status)
    if err or synced(status) then
      return done()
    end
    vim.notify(FIRST_SYNC_NOTICE, vim.log.levels.INFO)
    call(client, "request", "recall/sync", vim.empty_dict(), done)
  end)
  if not ok then
    done()
  end
end

-- request sends a request and calls cb(err_message, result) on the main
-- loop. It returns a handle whose cancel() drops the answer and tells the
-- server ($/cancelRequest), e.g. for a search a newer one supersedes.
function M.request(method, params, cb)
  local handle = { cancelled = false }
  function handle.cancel()
    handle.cancelled = true
    if handle.client and handle.id then
      pcall(call, handle.client, "cancel_request", handle.id)
    end
  end
  M.when_ready(function(client, err)
    if handle.cancelled then
      return
    end
    if not client then
      return cb(err)
    end
    local function send()
      if handle.cancelled then
        return
      end
      local ok, id = call(client, "request", method, object(params), function(rpc_err, result)
        handle.id = nil
        if handle.cancelled then
          return
        end
        if rpc_err then
          cb("Recall: " .. method .. ": " .. message_of(rpc_err))
        else
          cb(nil, result)
        end
      end)
      if ok then
        handle.client, handle.id = client, id
      else
        cb("Recall: " .. method .. ": the server is not running any more; run :RecallRestart")
      end
    end
    if reads_history[method] then
      M.first_sync(client, send)
    else
      send()
    end
  end)
  return handle
end

-- request_sync waits for the answer: for scripts and :checkhealth, never
-- for the editor's own commands. Returns result or nil, err_message.
function M.request_sync(method, params, timeout_ms)
  timeout_ms = timeout_ms or config.options.timeout_ms
  local done, result, err = false, nil, nil
  M.request(method, params, function(e, r)
    done, result, err = true, r, e
  end)
  if not vim.wait(timeout_ms, function()
    return done
  end, 10) then
    return nil, "Recall: " .. method .. ": no answer within " .. timeout_ms .. " ms"
  end
  if err then
    return nil, err
  end
  return result
end

function M.stop()
  local client = M.current()
  if client then
    state(client.id).stopping = true
    call(client, "stop")
  end
  client_id = nil
end

-- reset forgets a failed start (setup() and :RecallRestart).
function M.reset()
  failure = nil
end

-- failure_message is why the server could not start, if it could not.
function M.failure_message()
  return failure
end

return M
