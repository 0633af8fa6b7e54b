-- Hover on session ids in ordinary buffers the client attached to.
local T = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/helpers.lua")
-- A fresh index of its own: hover reads the index only, so this spec also
-- shows that the plugin builds it on a first start without any command.
T.setup({ index = T.env.tmp .. "/hover-index.db" })

local SID, TITLE = "ses_dd7571907ffe5vPpW7vxTE77tW", "Investigate nightly worker failure"

local function wait_attached(buf)
  T.wait(15000, function()
    local c = require("recall.client").current()
    return c and c.initialized and vim.lsp.buf_is_attached(buf, c.id)
  end, "the client to attach to buffer " .. buf)
end

local function hover_at(buf, row, col)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = row, character = col },
  }
  local res = vim.lsp.buf_request_sync(buf, "textDocument/hover", params, 10000) or {}
  for _, r in pairs(res) do
    if r.result then
      return r.result
    end
  end
  return nil
end

local function float_text()
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(w).relative ~= "" then
      return table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false), "\n"), w
    end
  end
end

T.run("hover on a ses_ id in a file buffer shows the session (markdown)", function()
  vim.cmd("edit " .. T.env.tmp .. "/notes.txt")
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "see the quota incident", "  from " .. SID .. " yesterday" })
  wait_attached(buf)
  local res
  -- The first start indexes the history in the background (on_init).
  T.wait(20000, function()
    res = hover_at(buf, 1, 12)
    return res ~= nil
  end, "a hover result once the first index is built")
  T.eq(res.contents.kind, "markdown", "hover kind")
  T.contains(res.contents.value, TITLE, "hover text")
  T.contains(res.contents.value, "recall:/session/" .. SID, "transcript link")
  T.eq(hover_at(buf, 0, 4), nil, "no hover away from ids")
end)

T.run("K opens the hover float (0.7-0.9: plugin maps K)", function()
  vim.api.nvim_win_set_cursor(0, { 2, 12 })
  T.ok(vim.fn.maparg("K", "n") ~= "", "K is mapped in the attached buffer")
  vim.cmd("normal K")
  local text
  T.wait(10000, function()
    text = float_text()
    return text ~= nil
  end, "a hover float")
  T.contains(text, TITLE, "float text")
  local _, w = float_text()
  vim.api.nvim_win_close(w, true)
end)

local has010 = vim.fn.has("nvim-0.10") == 1

T.run(has010 and "K is Neovim's own hover mapping (0.10+): the plugin adds none"
  or "K elsewhere keeps 'keywordprg' (0.7-0.9: the plugin's K)", function()
  if has010 then
    -- 0.10+ maps K to vim.lsp.buf.hover on attach, unless the user mapped
    -- K; the plugin's own mapping (keymaps option) is for older versions.
    local m = vim.fn.maparg("K", "n", false, true)
    T.ok(m and m.desc ~= "Recall: hover on session/message ids, else keywordprg", "K is not the plugin's mapping on 0.10+")
    return
  end
  local looked_up
  vim.api.nvim_create_user_command("RecallTestK", function(o)
    looked_up = o.args
  end, { nargs = "*" })
  vim.bo.keywordprg = ":RecallTestK"
  vim.api.nvim_win_set_cursor(0, { 1, 9 })
  vim.cmd("normal K")
  T.eq(looked_up, "quota", "keywordprg got the word under the cursor")
  T.eq(float_text(), nil, "no hover float")
end)

T.run("vim.lsp.buf.hover in a scratch buffer after :RecallAttach", function()
  vim.cmd("enew")
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].buftype = "nofile"
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "Refund: ses_dd7572c15ffeYOkoClbrg3kQ0s" })
  vim.cmd("RecallAttach")
  wait_attached(buf)
  vim.api.nvim_win_set_cursor(0, { 1, 12 })
  vim.lsp.buf.hover()
  local text
  T.wait(10000, function()
    text = float_text()
    return text ~= nil
  end, "a hover float")
  T.contains(text, "Refund window design (renamed)", "float text")
end)

T.run("buffers of other kinds are not attached", function()
  vim.cmd("enew")
  vim.cmd("setlocal buftype=nofile")
  vim.cmd("doautocmd FileType")
  local c = require("recall.client").current()
  T.ok(not vim.lsp.buf_is_attached(0, c.id), "a nofile buffer stays unattached without :RecallAttach")
end)

T.finish()
