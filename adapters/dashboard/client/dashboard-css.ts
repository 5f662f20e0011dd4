/** The dashboard's style sheet, served as a file (the CSP allows no inline style). */
export const DASHBOARD_CSS = `
:root { color-scheme: light dark; --accent: #2f6fb0; --muted: #6b7280; --bad: #b42318; --ok: #2e7d32; --line: #d0d5dd; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; }
header.top { display: flex; gap: 1.2rem; align-items: center; padding: .6rem 1.2rem; border-bottom: 1px solid var(--line); flex-wrap: wrap; }
header.top .brand { font-weight: 700; }
header.top nav { display: flex; gap: .4rem 1rem; flex: 1; flex-wrap: wrap; }
header.top form { display: inline; }
main { padding: 1rem 1.2rem 3rem; max-width: 72rem; }
a { color: var(--accent); }
h1 { font-size: 1.4rem; margin: .4rem 0 1rem; }
h2 { font-size: 1.15rem; margin: 1.6rem 0 .6rem; }
table { border-collapse: collapse; width: 100%; margin: .4rem 0 1rem; }
th, td { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; font-size: .85rem; color: var(--muted); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.muted { color: var(--muted); }
.error, .field-error { color: var(--bad); }
.notice { border: 1px solid var(--line); border-left: 4px solid var(--accent); padding: .6rem .8rem; margin: .8rem 0; }
.notice.bad { border-left-color: var(--bad); }
.secret { font-family: ui-monospace, monospace; word-break: break-all; background: rgba(127,127,127,.12); padding: .3rem .5rem; display: inline-block; }
pre { background: rgba(127,127,127,.12); padding: .6rem .8rem; white-space: pre-wrap; overflow-wrap: anywhere; }
form.stack { display: grid; gap: .7rem; max-width: 40rem; }
form.stack label { display: grid; gap: .2rem; }
form.stack label.check { display: flex; gap: .5rem; align-items: center; }
fieldset { border: 1px solid var(--line); padding: .6rem .8rem; display: grid; gap: .6rem; min-width: 0; }
form.stack > *, fieldset > * { min-width: 0; }
input[type=text], input[type=email], input[type=password], input[type=number], input[type=url], select, textarea { font: inherit; padding: .35rem .45rem; width: 100%; }
button { font: inherit; padding: .35rem .8rem; cursor: pointer; }
button.danger { color: var(--bad); }
.inline { display: inline; }
.actions { display: flex; gap: .6rem; flex-wrap: wrap; align-items: center; margin: .6rem 0; }
.figures { display: grid; grid-template-columns: repeat(auto-fill, minmax(9rem, 1fr)); gap: .6rem; }
.figures div { border: 1px solid var(--line); padding: .5rem .7rem; }
.figures b { display: block; font-size: 1.3rem; font-variant-numeric: tabular-nums; }
.chart { min-height: 280px; width: 100%; overflow-x: auto; }
.card { border: 1px solid var(--line); padding: .8rem 1rem; margin: 1rem 0; }
.card h2 { margin-top: 0; }
@media (max-width: 48rem) {
  /* A phone: a wide table scrolls on its own; the page itself never scrolls sideways. */
  table { display: block; overflow-x: auto; }
  main { padding: .8rem .7rem 2rem; }
}
`;
