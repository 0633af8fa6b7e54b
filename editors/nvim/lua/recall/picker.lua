-- Pickers: vim.ui.select everywhere, Telescope when it is installed.
local config = require("recall.config")

local M = {}

local function telescope()
  local choice = config.options.picker
  if choice == "select" then
    return nil
  end
  local ok, pickers = pcall(require, "telescope.pickers")
  if not ok then
    if choice == "telescope" then
      vim.notify("Recall: picker = \"telescope\" but Telescope is not installed; using vim.ui.select", vim.log.levels.WARN)
    end
    return nil
  end
  return {
    pickers = pickers,
    finders = require("telescope.finders"),
    previewers = require("telescope.previewers"),
    conf = require("telescope.config").values,
    actions = require("telescope.actions"),
    state = require("telescope.actions.state"),
  }
end

local function with_telescope(t, items, opts, on_choice)
  t.pickers
    .new({}, {
      prompt_title = opts.prompt,
      finder = t.finders.new_table({
        results = items,
        entry_maker = function(item)
          local line = opts.format_item(item)
          return { value = item, display = line, ordinal = line }
        end,
      }),
      sorter = t.conf.generic_sorter({}),
      previewer = opts.preview and t.previewers.new_buffer_previewer({
        title = "Recall",
        define_preview = function(self, entry)
          vim.api.nvim_buf_set_lines(self.state.bufnr, 0, -1, false, opts.preview(entry.value))
          vim.bo[self.state.bufnr].filetype = "markdown"
        end,
      }) or nil,
      attach_mappings = function(prompt_bufnr)
        t.actions.select_default:replace(function()
          local entry = t.state.get_selected_entry()
          t.actions.close(prompt_bufnr)
          if entry then
            on_choice(entry.value)
          end
        end)
        return true
      end,
    })
    :find()
end

-- builtin is true when vim.ui.select is Neovim's own (an inputlist): no
-- UI plugin (dressing.nvim, fzf-lua, telescope-ui-select…) replaced it.
local function builtin()
  local info = debug.getinfo(vim.ui.select, "S")
  local src = info and info.source or ""
  -- "?": compiled into Neovim without a source name (a plugin's is a file).
  return src == "?" or src:find("vim/ui.lua", 1, true) ~= nil
end
M.builtin = builtin

-- page_size is how many rows Neovim's inputlist shows without a
-- "-- More --" prompt: the screen less the prompt, the "Type number" line,
-- the command line and a "more…" row.
function M.page_size()
  return math.max(vim.o.lines - 4, 3)
end

local function select_page(items, opts, on_choice, first)
  local size = M.page_size()
  local page = {}
  for i = first, math.min(first + size - 1, #items) do
    table.insert(page, items[i])
  end
  local more = first + size <= #items
  if more then
    table.insert(page, { recall_more = first + size })
  end
  local prompt = opts.prompt
  if first > 1 or more then
    prompt = string.format("%s [%d-%d of %d]", prompt, first, first + #page - (more and 2 or 1), #items)
  end
  local ok, err = pcall(vim.ui.select, page, {
    prompt = prompt,
    kind = opts.kind or "recall",
    format_item = function(item)
      if item.recall_more then
        return string.format("more… (%d left)", #items - item.recall_more + 1)
      end
      return opts.format_item(item)
    end,
  }, function(item)
    if item == nil then
      return -- cancelled: nothing to say
    end
    if item.recall_more then
      -- After the inputlist returned: the next page is a fresh prompt.
      vim.schedule(function()
        select_page(items, opts, on_choice, item.recall_more)
      end)
      return
    end
    on_choice(item)
  end)
  -- Ctrl-C in the inputlist is a cancel too, not a Lua error.
  if not ok and not tostring(err):find("Keyboard interrupt", 1, true) then
    error(err, 0)
  end
end

-- pick shows items and calls on_choice(item) with the one chosen (nothing on
-- cancel). opts: prompt, format_item(item) -> one line, preview(item) ->
-- lines (Telescope's preview pane), kind (for vim.ui.select UIs). Neovim's
-- own vim.ui.select gets a screenful at a time.
function M.pick(items, opts, on_choice)
  local t = telescope()
  if t then
    return with_telescope(t, items, opts, on_choice)
  end
  if builtin() then
    return select_page(items, opts, on_choice, 1)
  end
  vim.ui.select(items, {
    prompt = opts.prompt,
    kind = opts.kind or "recall",
    format_item = opts.format_item,
  }, function(item)
    if item ~= nil then
      on_choice(item)
    end
  end)
end

return M
