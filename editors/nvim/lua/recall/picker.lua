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

-- pick shows items and calls on_choice(item) with the one chosen (nothing on
-- cancel). opts: prompt, format_item(item) -> one line, preview(item) ->
-- lines (Telescope's preview pane), kind (for vim.ui.select UIs).
function M.pick(items, opts, on_choice)
  local t = telescope()
  if t then
    return with_telescope(t, items, opts, on_choice)
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
