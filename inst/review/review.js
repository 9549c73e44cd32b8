// Reviewer decisions in the noisylabels review report (see review_report()).
// The DT table renders the `decision` column as a select (keep / relabel /
// drop) and `new_label` as a select of the label's classes (a number input
// for numeric labels); both read their value from `state`, keyed by the
// row number in the data (column 0), so a decision survives paging,
// sorting and filtering. `state` is saved in the browser's localStorage
// under the report's id and restored when the page is opened again.
// Keyboard: the up and down arrows (or j) move the current row, k keep, r relabel to the
// new_label shown, d drop, 1-9 relabel to that class, 0 clear.
// A search box (any column) and a row of filter boxes under the header
// narrows the table per column: text matches as a case-insensitive
// substring, and numbers can be compared (`> 0.5`, `<= 3`, `= 1`) or given a
// range (`0.2 .. 0.8`). (DT's own column filters are not used: they need
// selectize and noUiSlider builds that Debian's DT does not match.)
// "Download decisions" writes the marked rows as CSV for apply_review()
// (and, in audit mode, every sampled row with its verdict for
// estimate_errors()); each line carries the fingerprint of its data row.
window.NLReview = (function () {
  'use strict';
  var state = {};     // row -> {decision: 'keep' | 'relabel' | 'drop' | '', value: string}
  var table = null;
  var current = -1;   // index of the current row among the displayed rows
  var meta = function () { return window.NLReviewMeta || {}; };
  var storeKey = function () { return 'noisylabels-review:' + (meta().reportId || location.pathname); };

  function esc(s) {
    return String(s).replace(/&/g, '&amp;').replace(/"/g, '&quot;')
      .replace(/</g, '&lt;').replace(/>/g, '&gt;');
  }
  function save() {
    try { localStorage.setItem(storeKey(), JSON.stringify(state)); } catch (e) { /* private mode */ }
  }
  function restore() {
    try {
      var s = JSON.parse(localStorage.getItem(storeKey()) || '{}');
      Object.keys(s).forEach(function (k) { state[k] = s[k]; });
    } catch (e) { /* nothing saved */ }
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
    if (meta().blind && !decisionOf(row[0])) return '<span class="nl-hidden" title="shown after your verdict">\u00b7</span>';
    var classes = meta().classes;
    if (classes && classes.length) {
      var opts = classes.map(function (c, i) {
        return '<option value="' + esc(c) + '"' + (c === v ? ' selected' : '') + '>' +
          (i < 9 ? (i + 1) + ': ' : '') + esc(c) + '</option>';
      }).join('');
      return '<select class="nl-value" data-row="' + row[0] + '" aria-label="new label for row ' +
        row[0] + '">' + opts + '</select>';
    }
    return '<input class="nl-value" type="' + (meta().numeric ? 'number' : 'text') + '" step="any" data-row="' +
      row[0] + '" value="' + esc(v) + '" aria-label="new label for row ' + row[0] + '">';
  }
  // Blind audit: the model's columns stay hidden until the row has a verdict.
  function renderBlind(data, type, row) {
    if (type !== 'display' || decisionOf(row[0])) return data;
    return '<span class="nl-hidden" title="shown after your verdict">\u00b7</span>';
  }

  function marked() {
    return Object.keys(state).map(Number).filter(function (r) { return decisionOf(r); })
      .sort(function (a, b) { return a - b; });
  }
  function updateCount() {
    var el = document.getElementById('nl-count');
    var n = marked().length;
    var txt = n + (n === 1 ? ' row marked' : ' rows marked');
    if (meta().audit && table) txt += ' of ' + table.rows().count();
    if (el) el.textContent = txt;
  }
  function refreshRow(r) {
    if (!table) return;
    var idx = table.rows(function (i, data) { return Number(data[0]) === r; }).indexes();
    if (idx.length) table.row(idx[0]).invalidate();
  }
  function setDecision(r, d, value) {
    state[r] = state[r] || {};
    state[r].decision = d;
    if (value !== undefined) state[r].value = value;
    save();
    refreshRow(r);
    highlight();
    updateCount();
  }

  function csvField(s) {
    s = String(s === undefined || s === null ? '' : s);
    return /[",\n\r]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
  }
  function csv() {
    var m = meta();
    var fps = m.fingerprints || {};
    var head = ['row', 'decision', 'new_label', 'label_column', 'row_fingerprint'];
    if (m.audit) head = head.concat(['wrong', 'fingerprint', 'design']);
    var lines = [head.join(',')];
    var rows = table ? table.rows().data() : [];
    var byRow = {};
    for (var i = 0; i < rows.length; i++) byRow[rows[i][0]] = rows[i];
    var which = m.audit ? Object.keys(byRow).map(Number).sort(function (a, b) { return a - b; }) : marked();
    which.forEach(function (r) {
      var d = decisionOf(r);
      var v = d === 'relabel' ? valueOf(r, byRow[r] || []) : '';
      var line = [r, d, csvField(v), csvField(m.labelColumn || ''), fps[r] || ''];
      if (m.audit) {
        line.push(d === '' ? 'NA' : d === 'keep' ? 'FALSE' : 'TRUE', (m.auditFingerprints || {})[r] || '',
                  csvField(m.design || ''));
      }
      lines.push(line.join(','));
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
  function addTooltips(dt) {
    var help = meta().columnHelp || [];
    dt.columns().every(function (i) {
      if (help[i]) $(this.header()).attr('title', help[i]);
    });
  }

  // Keyboard: the current row is one of the displayed rows of this page.
  function shownRows() { return $(table.table().body()).children('tr').not('.dataTables_empty'); }
  function highlight() {
    var trs = shownRows();
    trs.removeClass('nl-current');
    if (current >= trs.length) current = trs.length - 1;
    if (current >= 0) {
      var tr = trs.eq(current).addClass('nl-current');
      if (tr[0] && tr[0].scrollIntoView) tr[0].scrollIntoView({ block: 'nearest' });
    }
  }
  function currentRow() {
    var tr = shownRows().eq(current);
    if (!tr.length) return null;
    var data = table.row(tr).data();
    return data ? { r: Number(data[0]), data: data } : null;
  }
  function move(step) {
    var n = shownRows().length;
    if (!n) return;
    var info = table.page.info();
    if (current + step >= n && info.page < info.pages - 1) {
      table.page('next').draw('page'); current = 0;
    } else if (current + step < 0 && info.page > 0) {
      table.page('previous').draw('page'); current = shownRows().length - 1;
    } else {
      current = Math.max(0, Math.min(n - 1, current + step));
    }
    highlight();
  }
  function onKey(e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var tag = (e.target && e.target.tagName) || '';
    if (/^(INPUT|TEXTAREA)$/.test(tag) || (tag === 'SELECT' && !/^(j|k|r|d|[0-9])$/.test(e.key))) return;
    if (e.key === 'ArrowDown' || e.key === 'j') { move(1); e.preventDefault(); return; }
    if (e.key === 'ArrowUp') { move(-1); e.preventDefault(); return; }
    var cur = currentRow();
    if (!cur) return;
    var classes = meta().classes || [];
    if (e.key === 'k') setDecision(cur.r, 'keep');
    else if (e.key === 'r') setDecision(cur.r, 'relabel', valueOf(cur.r, cur.data));
    else if (e.key === 'd') setDecision(cur.r, 'drop');
    else if (e.key === '0') setDecision(cur.r, '');
    else if (/^[1-9]$/.test(e.key) && classes.length >= Number(e.key)) {
      setDecision(cur.r, 'relabel', classes[Number(e.key) - 1]);
    } else return;
    e.preventDefault();
  }

  function init(dt) {
    table = dt;
    restore();
    addFilters(dt);
    addTooltips(dt);
    var node = $(dt.table().node());
    node.on('change', 'select.nl-decision', function () {
      setDecision(Number(this.getAttribute('data-row')), this.value);
    });
    node.on('change', '.nl-value', function () {
      var r = Number(this.getAttribute('data-row'));
      setDecision(r, decisionOf(r) || 'relabel', this.value);
    });
    node.on('click', 'tbody tr', function () {
      current = shownRows().index(this);
      highlight();
    });
    dt.on('draw', function () { highlight(); });
    document.addEventListener('keydown', onKey);
    var btn = document.getElementById('nl-download');
    if (btn) btn.addEventListener('click', download);
    var clr = document.getElementById('nl-clear');
    if (clr) clr.addEventListener('click', function () {
      if (!window.confirm || window.confirm('Clear all decisions of this report?')) {
        Object.keys(state).forEach(function (k) { delete state[k]; });
        save();
        dt.rows().invalidate().draw(false);
        updateCount();
      }
    });
    if (marked().length) dt.rows().invalidate().draw(false);
    current = 0;
    highlight();
    updateCount();
  }

  return { init: init, renderDecision: renderDecision, renderValue: renderValue,
           renderBlind: renderBlind, csv: csv, download: download, state: state };
})();
