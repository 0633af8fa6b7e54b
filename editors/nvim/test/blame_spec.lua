-- Session blame (:RecallBlame, :RecallBlameOpen, hover, lenses), pitfalls,
-- :RecallCite, :RecallResume and find-in-transcript (]h/[h), over the
-- real blame fixture (testdata/opencode/blame: five OpenCode sessions that
-- wrote billing/tiers.py). run.sh puts the file as OpenCode left it where
-- the fixture's sessions wrote it.
local T = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/helpers.lua")

local FILE = os.getenv("RECALL_TEST_BLAME_FILE") or "/tmp/ocgen/recall-blame/projects/billing/billing/tiers.py"
local DB = assert(os.getenv("RECALL_TEST_BLAME_DB"), "RECALL_TEST_BLAME_DB is not set (run test/run.sh)")

-- A stand-in for opencode: says what it was asked and where, then waits.
local fake = T.env.tmp .. "/fake-opencode"
vim.fn.writefile({ "#!/bin/sh", 'echo "resumed $* in $(pwd)"', "sleep 30" }, fake)
vim.fn.setfperm(fake, "rwx------")

T.setup({ db = DB, index = T.env.tmp .. "/blame-index.db", resume_cmd = fake })
local blame = require("recall.blame")
local has012 = vim.lsp.codelens.enable ~= nil

local function marks(buf)
  local out = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, blame.ns, 0, -1, { details = true })) do
    local d = m[4] or {}
    local text = {}
    for _, chunk in ipairs(d.virt_text or {}) do
      table.insert(text, chunk[1])
    end
    for _, l in ipairs(d.virt_lines or {}) do
      for _, chunk in ipairs(l) do
        table.insert(text, chunk[1])
      end
    end
    out[m[2] + 1] = (out[m[2] + 1] and (out[m[2] + 1] .. " | ") or "") .. table.concat(text, "")
  end
  return out
end

local function lenses(b)
  if has012 then
    return vim.tbl_map(function(r)
      return r.lens
    end, vim.lsp.codelens.get({ bufnr = b }))
  end
  return vim.lsp.codelens.get(b)
end

local buf

T.run(":RecallBlame shows who wrote each line, as the buffer is", function()
  vim.cmd("edit " .. vim.fn.fnameescape(FILE))
  buf = vim.api.nvim_get_current_buf()
  -- A person's edit, not saved: line 6 is nobody's now.
  vim.api.nvim_buf_set_lines(buf, 5, 6, false, { "    (100, 0.12)," })
  local done
  require("recall").blame(buf, function(err, res)
    done = { err = err, res = res }
  end)
  T.wait(20000, function()
    return done ~= nil
  end, "the blame")
  T.eq(done.err, nil, "blame error")
  T.eq(done.res.lines, 18, "lines")
  T.eq(done.res.attributed, 17, "attributed lines")
  local m = marks(buf)
  T.contains(m[8] or "", "Add an enterprise tier", "line 8's annotation")
  T.ok((m[8] or ""):match("· 2026%-12%-01 %d%d:%d%dZ ·") ~= nil, "the time, in UTC: " .. tostring(m[8]))
  T.contains(m[1] or "", "Add a tiered price table", "line 1's annotation")
  T.contains(m[1] or "", "bit us before: Could not find oldString", "the pitfall above line 1")
  T.eq(m[6], nil, "no annotation on the line the person changed")
  T.contains(m[17] or "", "Round tier prices to cents", "line 17's annotation")
end)

T.run(":RecallBlame again hides it", function()
  require("recall").blame(buf)
  T.eq(vim.tbl_count(marks(buf)), 0, "annotations after the toggle")
end)

T.run("hover on a blamed line names the session, with a link to the message", function()
  local params = { textDocument = { uri = vim.uri_from_bufnr(buf) }, position = { line = 7, character = 4 } }
  local res = vim.lsp.buf_request_sync(buf, "textDocument/hover", params, 15000) or {}
  local text = ""
  for _, r in pairs(res) do
    if r.result and r.result.contents then
      text = text .. tostring(r.result.contents.value)
    end
  end
  T.contains(text, "Written in Add an enterprise tier", "hover")
  T.contains(text, "[Open transcript](recall:/session/", "hover link")
  T.contains(text, "around=msg_", "link at the message")
  T.contains(text, "Bit us before:", "pitfall in the hover")
end)

T.run("code lenses: the file lens, the pitfall and one per blamed range", function()
  T.wait(20000, function()
    local ls = lenses(buf)
    return #ls > 2
  end, "code lenses on " .. FILE)
  local titles = {}
  for _, l in ipairs(lenses(buf)) do
    titles[#titles + 1] = (l.range.start.line + 1) .. ": " .. tostring(l.command and l.command.title)
  end
  local all = table.concat(titles, "\n")
  T.contains(all, "1: 5 past sessions touched this file", "file lens")
  T.contains(all, "1: bit us before: Could not find oldString", "pitfall lens")
  T.contains(all, "8: written in Add an enterprise tier · ", "range lens")
end)

local transcript_buf

T.run(":RecallBlameOpen opens the message that wrote the line", function()
  vim.api.nvim_set_current_buf(buf)
  vim.api.nvim_win_set_cursor(0, { 8, 0 })
  blame.open_line()
  T.wait(20000, function()
    return vim.api.nvim_buf_get_name(0):find("recall://session/", 1, true) ~= nil
  end, "a transcript")
  transcript_buf = T.wait_loaded()
  local name = vim.api.nvim_buf_get_name(transcript_buf)
  T.contains(name, "around=msg_", "transcript at the message")
  T.contains(T.lines(transcript_buf), "apply_patch", "the patch that wrote line 8")
end)

T.run(":RecallCite copies the message's citation", function()
  vim.fn.setreg('"', "")
  vim.cmd("RecallCite")
  T.wait(15000, function()
    return vim.fn.getreg('"') ~= ""
  end, "the citation in the unnamed register")
  local c = vim.fn.getreg('"')
  T.ok(c:match("^Add an enterprise tier %(ses_%w+, msg_%w+, 2026%-12%-01%)$") ~= nil, "citation: " .. c)
  if vim.fn.has("clipboard") == 1 then
    T.eq(vim.fn.getreg("+"), c, "the + register")
  end
end)

T.run(":RecallResume runs the resume command in the session's directory", function()
  vim.api.nvim_set_current_buf(transcript_buf)
  vim.cmd("RecallResume")
  T.wait(15000, function()
    return vim.b.recall_resume ~= nil
  end, "the resume terminal")
  local term = vim.api.nvim_get_current_buf()
  T.eq(vim.bo[term].buftype, "terminal", "buffer type")
  T.wait(10000, function()
    return table.concat(T.lines(term), "\n"):find("resumed", 1, true) ~= nil
  end, "the command's output")
  local out = table.concat(T.lines(term), "\n")
  T.contains(out, "resumed --session ses_", "argv")
  T.contains(out, " in /tmp/ocgen/recall-blame/projects/billing", "cwd")
  vim.fn.jobstop(vim.b.recall_resume.job)
  vim.cmd("bwipeout!")
end)

T.run("]h and [h jump between the query's hits in a transcript, highlighted", function()
  require("recall").search("Decimal")
  local sel = T.wait_select(20000, "the hits picker")
  local i, hit = T.find_label(sel, "Add a minimum charge")
  sel.choose(hit, i)
  local tb = T.wait_loaded()
  T.wait(5000, function()
    return vim.b[tb].recall_query_pattern ~= nil
  end, "the query set on the transcript")
  local found = false
  for _, m in ipairs(vim.fn.getmatches()) do
    found = found or m.group == "RecallHit"
  end
  T.ok(found, "hits highlighted (RecallHit match)")
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  T.ok(blame.jump(1), "]h found a hit")
  local first = vim.api.nvim_win_get_cursor(0)[1]
  T.contains(vim.api.nvim_get_current_line():lower(), "decimal", "line at the first hit")
  local hit_lines = 0
  for _, l in ipairs(T.lines(tb)) do
    if l:lower():find("decimal", 1, true) then
      hit_lines = hit_lines + 1
    end
  end
  T.ok(hit_lines >= 2, "the transcript has several hits (" .. hit_lines .. ")")
  vim.cmd("normal ]h")
  local second = vim.api.nvim_win_get_cursor(0)[1]
  T.contains(vim.api.nvim_get_current_line():lower(), "decimal", "line at the next hit")
  T.ok(second ~= first, "]h moved to another hit")
  vim.cmd("RecallPrev")
  T.contains(vim.api.nvim_get_current_line():lower(), "decimal", "line at the previous hit")
  vim.fn.setreg('"', "")
  vim.cmd("RecallCite")
  T.wait(15000, function()
    return vim.fn.getreg('"') ~= ""
  end, "a citation from the transcript")
  T.contains(vim.fn.getreg('"'), "Add a minimum charge (ses_", "citation of the picked hit's session")
end)

T.finish()
