// Turnstile console: shows times in the viewer's zone and refreshes the live part of a page.
// Served from the console itself (the Content-Security-Policy allows no inline script).
(function () {
  'use strict';

  function localTimes(root) {
    root.querySelectorAll('time[datetime]').forEach(function (t) {
      var d = new Date(t.getAttribute('datetime'));
      if (!isNaN(d.getTime())) {
        t.title = t.getAttribute('datetime');
        t.textContent = d.toLocaleString(undefined, { timeZoneName: 'short' });
      }
    });
  }

  function refresh(live) {
    var seconds = parseInt(live.getAttribute('data-refresh'), 10);
    if (!(seconds > 0)) {
      return;
    }
    if (live.hasAttribute('data-reload')) {
      // an error page: try the whole page again, so that its heading goes when the store is back
      setTimeout(function () { window.location.reload(); }, seconds * 1000);
      return;
    }
    setTimeout(function tick() {
      if (document.hidden) {
        setTimeout(tick, seconds * 1000);
        return;
      }
      fetch(window.location.href, { credentials: 'same-origin', cache: 'no-store' })
        .then(function (r) { return r.text(); })
        .then(function (html) {
          var doc = new DOMParser().parseFromString(html, 'text/html');
          var fresh = doc.getElementById('live');
          var current = document.getElementById('live');
          if (fresh && current) {
            var node = document.importNode(fresh, true);
            localTimes(node);
            current.replaceWith(node);
          }
          var clock = doc.getElementById('clock');
          var mine = document.getElementById('clock');
          if (clock && mine) {
            var c = document.importNode(clock, true);
            localTimes(c);
            mine.replaceWith(c);
          }
          document.body.classList.remove('stale');
        })
        .catch(function () { document.body.classList.add('stale'); })
        .finally(function () { setTimeout(tick, seconds * 1000); });
    }, seconds * 1000);
  }

  document.addEventListener('DOMContentLoaded', function () {
    localTimes(document);
    var live = document.getElementById('live');
    if (live) {
      refresh(live);
    }
  });
})();
