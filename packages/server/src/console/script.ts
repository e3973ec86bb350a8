// The console's own script, served as /console/assets/console.js (the CSP allows scripts from there only): the
// inbox's keyboard shortcuts, moving focus after a decision made in place, and optional notifications of new
// approvals. Plain ES2020, no build, no inline handler; every page works without it.

/** The text of console.js. */
export const CONSOLE_JS = `'use strict';
(() => {
  const STORE = 'mt-console-shortcuts';
  const typing = (el) => el instanceof HTMLElement && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  const cards = () => [...document.querySelectorAll('#inbox .card')];
  const current = () => {
    const active = document.activeElement;
    return active instanceof Element ? active.closest('#inbox .card') : null;
  };
  const focusCard = (card) => {
    if (!card) return;
    card.focus();
    card.scrollIntoView({ block: 'nearest' });
  };

  function setUp() {
    const toggle = document.getElementById('shortcuts-on');
    if (!toggle) return;
    toggle.checked = localStorage.getItem(STORE) !== 'off';
    toggle.addEventListener('change', () => localStorage.setItem(STORE, toggle.checked ? 'on' : 'off'));

    document.addEventListener('keydown', (event) => {
      if (!toggle.checked || event.altKey || event.ctrlKey || event.metaKey || typing(event.target)) return;
      const all = cards();
      const here = current();
      const at = here ? all.indexOf(here) : -1;
      if (event.key === 'j' || event.key === 'k') {
        event.preventDefault();
        const next = event.key === 'j' ? Math.min(at + 1, all.length - 1) : Math.max(at - 1, 0);
        focusCard(all[next]);
      } else if (event.key === 'a' && here) {
        event.preventDefault();
        here.querySelector('.approve-button')?.click();
      } else if (event.key === 'r' && here) {
        event.preventDefault();
        here.querySelector('.reason-field')?.focus();
      }
    });

    // Optional browser notifications of new approvals: asked for only on a click (the Notification API).
    const notify = document.getElementById('notify');
    let notifying = false;
    if (notify && 'Notification' in window) {
      notify.hidden = false;
      const on = () => {
        notifying = true;
        notify.textContent = 'Notifications of new approvals are on';
        notify.setAttribute('aria-pressed', 'true');
      };
      if (Notification.permission === 'granted' && localStorage.getItem(STORE + '-notify') === 'on') on();
      notify.addEventListener('click', async () => {
        if (notifying) {
          notifying = false;
          localStorage.setItem(STORE + '-notify', 'off');
          notify.textContent = 'Notify me of new approvals';
          notify.setAttribute('aria-pressed', 'false');
          return;
        }
        if ((await Notification.requestPermission()) === 'granted') {
          localStorage.setItem(STORE + '-notify', 'on');
          on();
        }
      });
    }
    const known = new Set(cards().map((c) => c.id));

    // A decision made in place removes its card: focus goes to the card that took its place, else the heading.
    let decided = null;
    document.addEventListener('submit', (event) => {
      const card = event.target instanceof Element ? event.target.closest('#inbox .card') : null;
      if (card) decided = { id: card.id, index: cards().indexOf(card) };
    }, true);
    const inbox = document.getElementById('inbox');
    new MutationObserver(() => {
      for (const card of cards()) {
        if (known.has(card.id)) continue;
        known.add(card.id);
        if (notifying) {
          const title = card.querySelector('h2')?.textContent ?? 'An approval is waiting';
          new Notification(title, { body: card.querySelector('.card-meta')?.textContent ?? '', tag: card.id });
        }
      }
      if (!decided) return;
      const still = document.getElementById(decided.id);
      if (still && still.classList.contains('card')) {
        if (still.querySelector('[aria-invalid=true]')) {
          still.querySelector('[aria-invalid=true]').focus();
          decided = null;
        }
        return;
      }
      const all = cards();
      const next = all[Math.min(decided.index, all.length - 1)];
      decided = null;
      if (next) focusCard(next);
      else document.getElementById('approvals-heading')?.focus();
    }).observe(inbox, { childList: true, subtree: true });
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', setUp);
  else setUp();
})();
`;
