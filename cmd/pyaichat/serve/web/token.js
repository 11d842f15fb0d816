// The first thing the page runs, before it loads anything else: the
// secret in the URL's fragment leaves the address bar and this tab's
// back/forward list. It is a one-time code (the URL serve prints), which
// is exchanged for the token, or the token itself (an IDE host's URL);
// the token is kept in sessionStorage. window.__tokenReady settles once
// that is done; window.__tokenProblem says why there is no token.
'use strict';

(function () {
  function take() {
    const m = /(?:^#|&)(code|token)=([0-9a-fA-F]+)/.exec(location.hash);
    if (!m) return null;
    history.replaceState(null, '', location.pathname);
    window.__tokenProblem = '';
    if (m[1] === 'token') {
      sessionStorage.setItem('pyaichat.token', m[2]);
      return Promise.resolve();
    }
    return fetch('/token', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ code: m[2] }),
    }).then(async (r) => {
      if (!r.ok) {
        window.__tokenProblem = r.status === 403 ? 'used' : 'refused';
        return;
      }
      sessionStorage.setItem('pyaichat.token', (await r.json()).token);
    }).catch(() => { window.__tokenProblem = 'unreachable'; });
  }
  window.__tokenReady = take() || Promise.resolve();
  // A new URL pasted into this tab (after serve restarted) changes only
  // the fragment, which does not reload the page: the page is told.
  window.addEventListener('hashchange', () => {
    const ready = take();
    if (ready) ready.then(() => window.dispatchEvent(new Event('pyaichat-token')));
  });
})();
