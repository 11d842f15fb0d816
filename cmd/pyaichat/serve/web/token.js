// The first thing the page runs, before it loads anything else: the token
// leaves the URL's fragment for sessionStorage, and the address bar and
// this tab's back/forward list keep the URL without it.
'use strict';

(function () {
  const m = /(?:^#|&)token=([0-9a-fA-F]+)/.exec(location.hash);
  if (m) {
    sessionStorage.setItem('pyaichat.token', m[1]);
    history.replaceState(null, '', location.pathname);
  }
})();
