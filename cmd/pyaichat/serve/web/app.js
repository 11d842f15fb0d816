// The pyaichat serve page: one xterm.js terminal showing one pyaichat
// session over the server's WebSocket (protocol version 1). The session
// outlives the page: its id is kept in sessionStorage, so a reload or a
// reconnection attaches to it again and the server replays the output
// from the last offset (seq) this page has shown.
'use strict';

(function () {
  const PROTOCOL = 1;
  const store = window.sessionStorage;
  const $ = (id) => document.getElementById(id);

  // The token is in sessionStorage: token.js took it from the URL's
  // fragment (never sent to a server), exchanging a one-time code for it,
  // or an IDE host handed it over through window.__setToken.

  const FONT_MIN = 8, FONT_MAX = 40;
  let fontSize = Number(localStorage.getItem('pyaichat.fontSize')) || 14;
  // A line height of 1 cuts the underscore off below the row at several
  // sizes (10, 14, 19, 23 with DejaVu Sans Mono): "__init__" read as
  // "  init  ". 1.15 leaves room for it at every size offered.
  const term = new Terminal({
    fontSize, lineHeight: 1.15, scrollback: 10000, allowProposedApi: true, cursorBlink: true,
    fontFamily: 'ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace',
  });
  const fit = new FitAddon.FitAddon();
  term.loadAddon(fit);
  term.loadAddon(new Unicode11Addon.Unicode11Addon());
  // Links in the output open in a new tab, which gets neither this page
  // (opener) nor its address (referrer).
  let lastLink = '';
  term.loadAddon(new WebLinksAddon.WebLinksAddon((ev, uri) => {
    lastLink = uri;
    window.open(uri, '_blank', 'noopener,noreferrer');
  }));
  const search = new SearchAddon.SearchAddon();
  term.loadAddon(search);
  // Images in the output: the iTerm2 inline image protocol (OSC 1337) and
  // SIXEL, which programs (and rich output) write as a terminal's. Their
  // pixels are held within 32 MB per page.
  const images = new ImageAddon.ImageAddon({ storageLimit: 32 });
  term.loadAddon(images);
  term.unicode.activeVersion = '11';
  term.open($('term'));
  fit.fit();
  term.focus();

  let ws = null;
  let sessionId = store.getItem('pyaichat.session');
  let seq = 0;          // the output offset shown so far
  let exited = false;
  let backoff = 500;
  let retry = null;
  let nextId = 1;

  function setStatus(state, text) {
    $('dot').className = 'dot ' + state;
    $('status').textContent = text;
  }

  function send(msg) {
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg));
  }

  const enc = new TextEncoder();
  function toBase64(bytes) {
    let s = '';
    for (let i = 0; i < bytes.length; i += 0x8000) {
      s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    }
    return btoa(s);
  }
  function fromBase64(b64) {
    if (Uint8Array.fromBase64) return Uint8Array.fromBase64(b64); // native: several times faster
    const s = atob(b64);
    const out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  }

  // Output goes to xterm.js one write at a time: what arrives while a
  // write is being parsed waits and then goes as one piece. Each write
  // has a fixed cost (timers, events, a cursor and textarea update), and
  // a fast loop's output comes as thousands of small messages.
  let queued = [];      // Uint8Arrays waiting for the write in progress
  let writing = false;
  function show(bytes) {
    if (writing) {
      queued.push(bytes);
      return;
    }
    writing = true;
    term.write(bytes, writeNext);
  }
  function writeNext() {
    if (!queued.length) {
      writing = false;
      return;
    }
    let data = queued[0];
    if (queued.length > 1) {
      let n = 0;
      for (const q of queued) n += q.length;
      data = new Uint8Array(n);
      n = 0;
      for (const q of queued) { data.set(q, n); n += q.length; }
    }
    queued = [];
    term.write(data, writeNext);
  }
  function note(text) { show(enc.encode(text)); }
  function clearScreen() {
    queued = [];
    term.reset();
  }

  function connect() {
    clearTimeout(retry);
    retry = null;
    const token = store.getItem('pyaichat.token');
    if (!token) {
      noToken();
      return;
    }
    if (ws) { ws.onclose = null; ws.close(); }
    setStatus('connecting', 'connecting');
    let opened = false;
    ws = new WebSocket('ws://' + location.host + '/ws', ['pyaichat.v1', 'auth.bearer.' + token]);
    ws.onopen = () => {
      opened = true;
      send({ type: 'hello', protocolVersion: PROTOCOL });
    };
    ws.onmessage = (ev) => handle(JSON.parse(ev.data));
    ws.onclose = () => {
      ws = null;
      connected(false);
      // A refused WebSocket does not say why (browsers hide the status):
      // ask the server whether it still takes this token.
      if (opened) retryLater(); else checkToken(token);
    };
  }

  // noToken says why the page has no token, and what to do.
  function noToken() {
    if (window.__tokenProblem === 'used') {
      setStatus('disconnected', 'link used');
      showBanner('This link was used already: each URL pyaichat serve prints opens one tab, and serve prints ' +
        'a new one when one is used. Open the newest URL it printed.', false);
    } else if (window.__tokenProblem === 'unreachable') {
      setStatus('disconnected', 'server unreachable');
      showBanner('pyaichat serve did not answer: is it still running? Start it again and open the URL it prints.', false);
    } else {
      setStatus('disconnected', 'no token: open the URL pyaichat serve printed');
    }
  }

  function retryLater() {
    setStatus('disconnected', 'disconnected; reconnecting in ' + (backoff / 1000).toFixed(1) + ' s (Reconnect: now)');
    retry = setTimeout(connect, backoff);
    backoff = Math.min(backoff * 2, 10000);
  }

  async function checkToken(token) {
    let refused = false;
    try {
      const r = await fetch('/sessions', { headers: { Authorization: 'Bearer ' + token } });
      refused = r.status === 401;
    } catch (err) {
      // the server is not there: wait for it
    }
    if (!refused) {
      retryLater();
      return;
    }
    // Retrying with the same token cannot help: each start of serve
    // makes a new one.
    setStatus('disconnected', 'token refused');
    showBanner('This page\'s token was refused: pyaichat serve has restarted (each start makes a new token) ' +
      'or another server has this port. Open the URL it printed, pyaichat serve: open http://…/#code=…, ' +
      'here or in a new tab.', false);
  }

  // connected enables what needs the server (Restart), or disables it
  // and says why.
  function connected(on) {
    for (const b of [$('restart'), $('banner-restart')]) {
      b.disabled = !on;
      b.title = on ? 'end this pyaichat and start a new one' : 'not connected to pyaichat serve: Restart needs it';
    }
  }

  function showBanner(text, withRestart) {
    $('banner-text').textContent = text;
    $('banner-restart').hidden = !withRestart;
    $('banner').hidden = false;
  }

  // A new URL pasted into this tab changes only its fragment, which does
  // not reload the page: token.js takes the token, and the page connects
  // with it.
  window.addEventListener('pyaichat-token', () => {
    if (window.__tokenProblem) {
      noToken();
      return;
    }
    backoff = 500;
    $('banner').hidden = true;
    connect();
  });

  let pendingOpen = 0; // the id of the openSession not yet answered
  function openSession() {
    seq = 0;
    exited = false;
    pendingOpen = nextId++;
    send({ type: 'openSession', id: pendingOpen, cols: term.cols, rows: term.rows });
  }

  function handle(msg) {
    switch (msg.type) {
      case 'welcome':
        backoff = 500;
        if (sessionId) {
          send({ type: 'attach', sessionId, lastSeq: seq });
        } else {
          offerDetached();
        }
        break;
      case 'opened':
        sessionId = msg.sessionId;
        store.setItem('pyaichat.session', sessionId);
        if (msg.gap) note('\r\n\x1b[2m[earlier output was not kept]\x1b[0m\r\n');
        seq = msg.seq;
        setStatus('connected', 'connected');
        connected(true);
        updateTitle();
        $('banner').hidden = true;
        $('sessions').hidden = true; // an offer of sessions is answered
        sendSize(); // a page that opens or attaches a session is in use
        break;
      case 'resized':
        // Another page set the session's size: this one no longer does
        // until it is used again.
        if (msg.sessionId === sessionId && !sizesSent.has(msg.cols + 'x' + msg.rows)) {
          sizeOwner = false;
          sizesSent.clear();
        }
        break;
      case 'stdout':
        if (msg.sessionId !== sessionId) break;
        // The page fell further behind than the server keeps: what it
        // skipped is gone (the screen catches up with the newest output).
        if (msg.gap && msg.seq > seq) note('\r\n\x1b[2m[output skipped]\x1b[0m\r\n');
        show(fromBase64(msg.dataBase64));
        seq = msg.seq;
        break;
      case 'exit':
        if (msg.sessionId !== sessionId) break;
        exited = true;
        updateTitle();
        setStatus('exited', 'exited');
        showBanner(msg.reason
          ? 'This session has ended: ' + msg.reason + ' (pyaichat exited with status ' + msg.code + ').'
          : 'pyaichat exited with status ' + msg.code + '.', true);
        break;
      case 'error':
        onError(msg);
        break;
    }
  }

  // A page with no session of its own (a new tab) is offered the
  // sessions no page shows (their tab was closed) before a new one
  // starts: pyaichat keeps them running, with their variables.
  async function offerDetached() {
    let detached = [];
    try {
      const r = await fetch('/sessions', { headers: { Authorization: 'Bearer ' + store.getItem('pyaichat.token') } });
      if (r.ok) detached = (await r.json()).sessions.filter((x) => !x.exited && x.attached === 0);
    } catch (err) {
      // no list: start a new session as before
    }
    if (!detached.length) {
      openSession();
      return;
    }
    const offer = $('sessions');
    offer.replaceChildren(document.createTextNode(
      detached.length === 1 ? 'A session no page shows is running: ' : detached.length + ' sessions no page shows are running: '));
    for (const x of detached) offer.append(offerButton('attach ' + x.id.slice(0, 6), () => attachTo(x.id)));
    offer.append(offerButton('new session', openSession));
    offer.hidden = false;
    setStatus('connected', 'choose a session');
  }
  function offerButton(text, act) {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = text;
    b.onclick = () => {
      $('sessions').hidden = true;
      act();
      term.focus();
    };
    return b;
  }
  function attachTo(id) {
    sessionId = id;
    seq = 0;
    exited = false;
    clearScreen();
    send({ type: 'attach', sessionId: id, lastSeq: 0 });
  }

  function onError(msg) {
    if (msg.sessionGone && msg.sessionId && msg.sessionId === sessionId) {
      // The session this page showed is gone (ended when idle, or by
      // another page; or this is another server): say why, start anew.
      sessionId = null;
      store.removeItem('pyaichat.session');
      clearScreen();
      note('\x1b[2m[' + msg.message + '; this is a new session]\x1b[0m\r\n');
      openSession();
      return;
    }
    if (msg.id === pendingOpen && !sessionId) {
      // No session could start (the server's limit, or it is stopping).
      setStatus('disconnected', 'no session');
      showBanner('pyaichat serve could not start a session: ' + msg.message + '.', true);
      return;
    }
    console.warn('pyaichat serve:', msg.message);
  }

  function restart() {
    if (!ws || ws.readyState !== WebSocket.OPEN) return; // disabled, and says why
    if (sessionId) send({ type: 'close', sessionId });
    sessionId = null;
    store.removeItem('pyaichat.session');
    clearScreen();
    $('banner').hidden = true;
    openSession();
    term.focus();
  }

  // Clipboard keys as VS Code's terminal has them: Ctrl+Shift+C copies
  // and Ctrl+Shift+V pastes; Ctrl+C copies when text is selected and
  // interrupts otherwise; Ctrl+V pastes, unless "raw Ctrl+V" is set (for
  // quoted insert at the prompt). A paste goes through the browser's paste
  // event, which xterm.js brackets when pyaichat asked for it.
  let rawCtrlV = localStorage.getItem('pyaichat.rawCtrlV') === '1';
  function copySelection() {
    const text = term.getSelection();
    if (text && navigator.clipboard) {
      navigator.clipboard.writeText(text).catch((err) => setStatus('connected', 'copy failed: ' + err.message));
    }
    term.clearSelection();
  }
  function clipboardKey(ev) {
    if (ev.type !== 'keydown' || !ev.ctrlKey || ev.altKey || ev.metaKey) return true;
    const key = ev.key.toLowerCase();
    if (key === 'c' && (ev.shiftKey || term.hasSelection())) {
      ev.preventDefault();
      copySelection();
      return false;
    }
    if (key === 'v' && (ev.shiftKey || !rawCtrlV)) {
      return false; // xterm.js leaves it; the browser pastes into its textarea
    }
    if (key === 'f' && ev.shiftKey) {
      ev.preventDefault();
      openSearch();
      return false;
    }
    return true;
  }

  // Search in the scrollback (Ctrl+Shift+F): Enter finds the next match
  // up the scrollback, Shift+Enter the one below, Esc closes.
  const searchLook = {
    decorations: {
      matchBackground: '#5a4a00', matchOverviewRuler: '#d0b000',
      activeMatchBackground: '#a07000', activeMatchColorOverviewRuler: '#ffcc00',
    },
  };
  function openSearch() {
    $('search').hidden = false;
    const box = $('search-text');
    const sel = term.getSelection();
    if (sel && !sel.includes('\n')) box.value = sel;
    box.focus();
    box.select();
  }
  function closeSearch() {
    search.clearDecorations();
    $('search').hidden = true;
    $('search-count').textContent = '';
    term.focus();
  }
  search.onDidChangeResults(({ resultIndex, resultCount }) => {
    $('search-count').textContent = resultCount ? (resultIndex + 1) + ' of ' + resultCount : 'no match';
  });
  $('search-text').addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape') {
      ev.preventDefault();
      closeSearch();
    } else if (ev.key === 'Enter' && ev.target.value) {
      ev.preventDefault();
      // Searching up is what one does in a terminal's scrollback.
      if (ev.shiftKey) search.findNext(ev.target.value, searchLook);
      else search.findPrevious(ev.target.value, searchLook);
    }
  });
  term.attachCustomKeyEventHandler(clipboardKey);
  // Right-click copies the selection, or pastes when there is none (as
  // VS Code's terminal on Windows and most terminals there do).
  $('term').addEventListener('contextmenu', (ev) => {
    ev.preventDefault();
    if (term.hasSelection()) {
      copySelection();
    } else if (navigator.clipboard && navigator.clipboard.readText) {
      navigator.clipboard.readText().then((text) => { if (text) term.paste(text); })
        .catch((err) => setStatus('connected', 'paste failed: ' + err.message));
    }
    term.focus();
  }, true);
  $('rawctrlv').checked = rawCtrlV;
  $('rawctrlv').onchange = (ev) => {
    rawCtrlV = ev.target.checked;
    localStorage.setItem('pyaichat.rawCtrlV', rawCtrlV ? '1' : '0');
    term.focus();
  };

  // The tab's title follows the mode of the prompt on the cursor's line
  // (py> or ai>) and the session, or a title the program set.
  let programTitle = '';
  let mode = '';
  function updateTitle() {
    const id = sessionId ? ' · ' + sessionId.slice(0, 6) : '';
    const state = exited ? 'exited' : mode;
    document.title = (programTitle || 'pyaichat') + (state ? ' ' + state : '') + id;
  }
  term.onTitleChange((t) => { programTitle = t; updateTitle(); });
  term.onWriteParsed(() => {
    const b = term.buffer.active;
    const line = b.getLine(b.baseY + b.cursorY);
    const m = line && /^(py|ai)> /.exec(line.translateToString(false, 0, 4));
    if (m && m[1] + '>' !== mode) {
      mode = m[1] + '>';
      updateTitle();
    }
  });

  // One size per session, the size of the page last used: a page sends
  // its size when it opens or attaches the session, when it is used (a
  // key, a click) after another page set a size, and when its own size
  // changes while the size is its. Two pages on one session would
  // otherwise resize it in turn.
  let sizeOwner = false;
  const sizesSent = new Set(); // this page's, since it last took the size
  function sendSize() {
    if (!sessionId || exited) return;
    sizeOwner = true;
    sizesSent.add(term.cols + 'x' + term.rows);
    send({ type: 'resize', sessionId, cols: term.cols, rows: term.rows });
  }
  function claimSize() {
    if (!sizeOwner) sendSize();
  }
  $('term').addEventListener('mousedown', claimSize);

  function sendKeys(d) {
    claimSize();
    if (sessionId && !exited) send({ type: 'stdin', sessionId, dataBase64: toBase64(enc.encode(d)) });
  }
  term.onData((d) => {
    if (ctrlArmed && d.length === 1 && /[@-_a-z]/i.test(d)) {
      d = String.fromCharCode(d.toUpperCase().charCodeAt(0) & 0x1f); // Ctrl from the key row
      armCtrl(false);
    }
    sendKeys(d);
  });

  // A row of the keys a touch screen's keyboard lacks (Esc, Tab, Ctrl,
  // the arrows, ^C), shown where the pointer is coarse. Its buttons do
  // not take the focus, so the on-screen keyboard stays up. Ctrl applies
  // to the next key typed.
  const rowKeys = {
    esc: '\x1b', tab: '\t', 'ctrl-c': '\x03',
    up: '\x1b[A', down: '\x1b[B', right: '\x1b[C', left: '\x1b[D',
  };
  let ctrlArmed = false;
  function armCtrl(on) {
    ctrlArmed = on;
    document.querySelector('#keys [data-key=ctrl]').setAttribute('aria-pressed', String(on));
  }
  function arrowKey(seq) {
    // Arrows as the terminal sends them in application cursor mode.
    return term.modes.applicationCursorKeysMode ? seq.replace('\x1b[', '\x1bO') : seq;
  }
  for (const b of document.querySelectorAll('#keys button')) {
    b.addEventListener('pointerdown', (ev) => ev.preventDefault());
    b.addEventListener('mousedown', (ev) => ev.preventDefault());
    b.addEventListener('click', () => {
      const key = b.dataset.key;
      if (key === 'ctrl') {
        armCtrl(!ctrlArmed);
      } else {
        armCtrl(false);
        sendKeys(['up', 'down', 'left', 'right'].includes(key) ? arrowKey(rowKeys[key]) : rowKeys[key]);
      }
      term.focus();
    });
  }
  const coarse = window.matchMedia('(pointer: coarse)');
  const showKeys = () => { $('keys').hidden = !coarse.matches; };
  coarse.addEventListener('change', showKeys);
  showKeys();
  term.onBinary((d) => {
    const b = new Uint8Array(d.length);
    for (let i = 0; i < d.length; i++) b[i] = d.charCodeAt(i) & 255;
    if (sessionId && !exited) send({ type: 'stdin', sessionId, dataBase64: toBase64(b) });
  });
  term.onResize(() => {
    if (sizeOwner) sendSize();
  });
  // The terminal fits its area whenever that changes: the window, and
  // also the banner above it appearing (or the last rows would be pushed
  // below the window) or going.
  new ResizeObserver(() => fit.fit()).observe($('term'));

  function setFont(size) {
    fontSize = Math.max(FONT_MIN, Math.min(FONT_MAX, size));
    localStorage.setItem('pyaichat.fontSize', String(fontSize));
    term.options.fontSize = fontSize;
    $('fontsize').textContent = String(fontSize);
    fit.fit();
  }
  $('fontsize').textContent = String(fontSize);
  $('smaller').onclick = () => setFont(fontSize - 1);
  $('bigger').onclick = () => setFont(fontSize + 1);
  $('reconnect').onclick = () => { backoff = 500; connect(); };
  $('restart').onclick = restart;
  $('banner-restart').onclick = restart;

  // Files dropped on the terminal: each is uploaded into the session's
  // upload directory, and the stored paths are inserted at the prompt.
  function injectPaths(paths) {
    if (sessionId && paths.length) send({ type: 'injectFiles', sessionId, paths });
    term.focus();
  }
  async function upload(file) {
    const r = await fetch('/upload/' + encodeURIComponent(sessionId), {
      method: 'POST',
      headers: {
        Authorization: 'Bearer ' + store.getItem('pyaichat.token'),
        'X-File-Name': encodeURIComponent(file.name),
      },
      body: file,
    });
    if (!r.ok) throw new Error(await r.text());
    return (await r.json()).path;
  }
  const area = $('term');
  area.addEventListener('dragover', (e) => { e.preventDefault(); area.classList.add('dropping'); });
  area.addEventListener('dragleave', () => area.classList.remove('dropping'));
  area.addEventListener('drop', async (e) => {
    e.preventDefault();
    area.classList.remove('dropping');
    if (!sessionId) return;
    const paths = [];
    for (const f of e.dataTransfer.files) {
      try {
        paths.push(await upload(f));
      } catch (err) {
        setStatus('connected', 'upload of ' + f.name + ' failed: ' + err.message);
      }
    }
    injectPaths(paths);
  });

  // For an IDE host: hand over the token, insert absolute paths of files
  // dropped in the IDE, and read the screen (tests use that too).
  window.__setToken = (token) => {
    store.setItem('pyaichat.token', token);
    connect();
  };
  window.__injectFiles = injectPaths;
  // The screen and scrollback as text, or only its last n lines.
  window.__screenText = (n) => {
    const b = term.buffer.active;
    const lines = [];
    for (let i = n ? Math.max(0, b.length - n) : 0; i < b.length; i++) lines.push(b.getLine(i).translateToString(true));
    return lines.join('\n');
  };
  // For tests: the font sizes offered, setting one, a cell's width, and
  // a callback once what the page was given is drawn.
  window.__fontSizes = { min: FONT_MIN, max: FONT_MAX };
  window.__setFontSize = setFont;
  window.__cellWidth = () => document.querySelector('.xterm-screen').getBoundingClientRect().width / term.cols;
  window.__drawn = (done) => {
    const check = () => (writing ? setTimeout(check, 10) : term.write('', done));
    check();
  };
  window.__selection = () => term.getSelection();
  window.__lastLink = () => lastLink;
  window.__imageCells = () => {
    let n = 0;
    const b = term.buffer.active;
    for (let y = 0; y < b.length; y++) for (let x = 0; x < term.cols; x++) if (images.getImageAtBufferCell(x, y)) n++;
    return n;
  };
  window.__viewportY = () => term.buffer.active.viewportY;
  window.__status = () => $('status').textContent;
  window.__sessionState = () => ({ sessionId, seq, exited, connected: !!ws && ws.readyState === WebSocket.OPEN, cols: term.cols, rows: term.rows, sizeOwner });

  connected(false);
  window.__tokenReady.then(connect);
})();
