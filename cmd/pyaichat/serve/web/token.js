// The first thing the page runs, before it loads anything else: the token
// leaves the URL's fragment for sessionStorage, and the address bar and
// this tab's back/forward list keep the URL without it.
'use strict';

(function () {
  function take() {
    const m = /(?:^#|&)token=([0-9a-fA-F]+)/.exec(location.hash);
    if (!m) return false;
    sessionStorage.setItem('pyaichat.token', m[1]);
    history.replaceState(null, '', location.pathname);
    return true;
  }
  take();
  // A new URL pasted into this tab (after serve restarted) changes only
  // the fragment, which does not reload the page: the page is told.
  window.addEventListener('hashchange', () => {
    if (take()) window.dispatchEvent(new Event('pyaichat-token'));
  });
})();
