// Reviewer decisions in the noisylabels review report (see review_report()).
// The DT table renders the `decision` column as a select (keep / relabel /
// drop) and `new_label` as a text input; both read their value from `state`,
// keyed by the row number in the data (column 0), so a decision survives
// paging, sorting and filtering. A search box (any column) and a row of
// filter boxes under the header
// narrows the table per column: text matches as a case-insensitive
// substring, and numbers can be compared (`> 0.5`, `<= 3`, `= 1`) or given a
// range (`0.2 .. 0.8`). (DT's own column filters are not used: they need
// selectize and noUiSlider builds that Debian's DT does not match.)
// "Download decisions" writes the marked rows as CSV for apply_review().
window.NLReview = (function () {
  'use strict';
  var state = {};     // row -> {decision: 'keep' | 'relabel' | 'drop' | '', value: string}
  var table = null;
  var meta = function () { return window.NLReviewMeta || {}; };

  function esc(s) {
    return String(s).replace(/&/g, '&amp;').replace(/"/g, '&quot;')
      .replace(/</g, '&lt;').replace(/>/g, '&gt;');
  }
  function suggested(row) {
    var v = row[meta().suggestedCol];
    return v === null || v === undefined ? '' : String(v);
  }
  function decisionOf(r) { return (state[r] && state[r].decision) || ''; }
  function valueOf(r, row) {
    var s = state[r];
    return s && s.value !== undefined ? s.value : suggested(row);
  }

  function renderDecision(data, type, row) {
    var d = decisionOf(row[0]);
    if (type !== 'display') return d;
    var opts = ['', 'keep', 'relabel', 'drop'].map(function (o) {
      return '<option value="' + o + '"' + (o === d ? ' selected' : '') + '>' +
        (o || '\u2013') + '</option>';
    }).join('');
    return '<select class="nl-decision nl-' + (d || 'none') + '" data-row="' + row[0] +
      '" aria-label="decision for row ' + row[0] + '">' + opts + '</select>';
  }
  function renderValue(data, type, row) {
    var v = valueOf(row[0], row);
    if (type !== 'display') return v;
    return '<input class="nl-value" data-row="' + row[0] + '" value="' + esc(v) +
      '" size="10" aria-label="new label for row ' + row[0] + '">';
  }

  function marked() {
    return Object.keys(state).map(Number).filter(function (r) { return decisionOf(r); })
      .sort(function (a, b) { return a - b; });
  }
  function updateCount() {
    var el = document.getElementById('nl-count');
    var n = marked().length;
    if (el) el.textContent = n + (n === 1 ? ' row marked' : ' rows marked');
  }
  function refresh(node) {
    // Re-read the row so that sorting and filtering see the new decision.
    if (table) table.row($(node).closest('tr')).invalidate();
    updateCount();
  }

  function csvField(s) {
    s = String(s === undefined || s === null ? '' : s);
    return /[",\n\r]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
  }
  function csv() {
    var lines = ['row,decision,new_label,label_column'];
    var rows = table ? table.rows().data() : [];
    var byRow = {};
    for (var i = 0; i < rows.length; i++) byRow[rows[i][0]] = rows[i];
    marked().forEach(function (r) {
      var d = decisionOf(r);
      var v = d === 'relabel' ? valueOf(r, byRow[r] || []) : '';
      lines.push([r, d, csvField(v), csvField(meta().labelColumn || '')].join(','));
    });
    return lines.join('\n') + '\n';
  }
  function download() {
    var blob = new Blob([csv()], { type: 'text/csv;charset=utf-8' });
    var a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = meta().file || 'decisions.csv';
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
  }

  var NUM = '(-?(?:\\d+\\.?\\d*|\\.\\d+)(?:e[-+]?\\d+)?)';
  var CMP = new RegExp('^\\s*(<=|>=|<|>|=)\\s*' + NUM + '\\s*$', 'i');
  var RANGE = new RegExp('^\\s*' + NUM + '\\s*\\.\\.\\s*' + NUM + '\\s*$', 'i');
  function matches(f, cell) {
    var m = CMP.exec(f), x = parseFloat(cell);
    if (m) {
      var v = parseFloat(m[2]);
      if (isNaN(x)) return false;
      return m[1] === '<' ? x < v : m[1] === '>' ? x > v : m[1] === '<=' ? x <= v :
        m[1] === '>=' ? x >= v : x === v;
    }
    m = RANGE.exec(f);
    if (m) return !isNaN(x) && x >= parseFloat(m[1]) && x <= parseFloat(m[2]);
    return String(cell).toLowerCase().indexOf(f.toLowerCase()) >= 0;
  }
  // Filters read the row's own data (DT's search cache, which renders every
  // cell of every row, is switched off: it cost more than a second at 10^4
  // rows), the decision and new_label columns from `state`.
  function cellText(rowData, c) {
    var m = meta();
    if (c === m.decisionCol) return decisionOf(rowData[0]);
    if (c === m.suggestedCol) return valueOf(rowData[0], rowData);
    var v = rowData[c];
    return v === null || v === undefined ? '' : String(v);
  }
  function addFilters(dt) {
    var filters = {}, global = '';
    var tableNode = dt.table().node();
    $.fn.dataTable.ext.search.push(function (settings, searchData, index, rowData) {
      if (settings.nTable !== tableNode) return true;
      for (var c in filters) {
        if (filters[c] && !matches(filters[c], cellText(rowData, Number(c)))) return false;
      }
      if (global) {
        for (var j = 0; j < rowData.length; j++) {
          if (cellText(rowData, j).toLowerCase().indexOf(global) >= 0) return true;
        }
        return false;
      }
      return true;
    });
    var row = $('<tr class="nl-filters"></tr>');
    dt.columns().every(function (i) {
      var name = $(this.header()).text().trim();
      row.append($('<td></td>').append(
        $('<input type="search" placeholder="filter">').attr('data-col', i)
          .attr('aria-label', 'filter ' + name)));
    });
    $(dt.table().header()).append(row);
    var timer = null;
    function redraw() { clearTimeout(timer); timer = setTimeout(function () { dt.draw(); }, 120); }
    row.on('input', 'input', function () {
      filters[this.getAttribute('data-col')] = this.value.trim();
      redraw();
    });
    $('#nl-search').on('input', function () { global = this.value.trim().toLowerCase(); redraw(); });
  }

  function init(dt) {
    table = dt;
    addFilters(dt);
    var node = $(dt.table().node());
    node.on('change', 'select.nl-decision', function () {
      var r = Number(this.getAttribute('data-row'));
      state[r] = state[r] || {};
      state[r].decision = this.value;
      refresh(this);
    });
    node.on('change', 'input.nl-value', function () {
      var r = Number(this.getAttribute('data-row'));
      state[r] = state[r] || {};
      state[r].value = this.value;
      if (!state[r].decision) state[r].decision = 'relabel';
      refresh(this);
    });
    var btn = document.getElementById('nl-download');
    if (btn) btn.addEventListener('click', download);
    updateCount();
  }

  return { init: init, renderDecision: renderDecision, renderValue: renderValue,
           csv: csv, download: download, state: state };
})();
