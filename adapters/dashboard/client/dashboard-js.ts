/**
 * The dashboard's own script, served as a file (the CSP allows no inline script): copy
 * buttons and the uPlot charts. Everything else is plain HTML forms and htmx attributes.
 */
export const DASHBOARD_JS = `"use strict";
document.addEventListener("click", function (event) {
  var button = event.target.closest("[data-copy]");
  if (!button) return;
  var source = document.getElementById(button.getAttribute("data-copy"));
  if (!source) return;
  // No clipboard API (a plain-http address other than localhost is no secure context) or
  // no permission: select the secret instead, so one keystroke copies it.
  var selectInstead = function () {
    var range = document.createRange();
    range.selectNodeContents(source);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    button.textContent = "Selected: press Ctrl+C (⌘C)";
  };
  if (!navigator.clipboard) return selectInstead();
  navigator.clipboard.writeText(source.textContent.trim()).then(function () {
    button.textContent = "Copied";
  }, selectInstead);
});

var SERIES = [
  { label: "requests", stroke: "#4e79a7" },
  { label: "admitted", stroke: "#59a14f" },
  { label: "queued", stroke: "#f28e2b" },
  { label: "rejected", stroke: "#e15759" },
];

function drawChart(element) {
  if (element.getAttribute("data-drawn") === "yes" || typeof uPlot === "undefined") return;
  element.setAttribute("data-drawn", "yes");
  fetch(element.getAttribute("data-series-url"), { headers: { accept: "application/json" } })
    .then(function (response) {
      // Signed out meanwhile, the fetch ends on the sign-in page: no JSON to draw.
      var type = response.headers.get("content-type") || "";
      if (!response.ok || type.indexOf("application/json") !== 0) throw new Error("no series");
      return response.json();
    })
    .then(function (data) {
      var options = {
        width: Math.max(320, element.clientWidth),
        height: 260,
        series: [{}].concat(SERIES.map(function (s) {
          return { label: s.label, stroke: s.stroke, width: 2 };
        })),
        axes: [{}, { label: "per minute" }],
      };
      element.textContent = "";
      var plot = new uPlot(options, [data.time, data.requests, data.admitted, data.queued, data.rejected], element);
      charts.push({ plot: plot, element: element });
    })
    .catch(function () {
      element.textContent = "The chart could not be loaded. Reload the page to try again.";
    });
}

// A chart follows its box when the window changes (a phone turned, a window narrowed): drawn
// for the width it had first, it would make the whole page scroll sideways.
var charts = [];
var resizeTimer = null;
window.addEventListener("resize", function () {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(function () {
    charts = charts.filter(function (chart) { return chart.element.isConnected; });
    charts.forEach(function (chart) {
      chart.plot.setSize({ width: Math.max(320, chart.element.clientWidth), height: 260 });
    });
  }, 100);
});

function drawCharts(root) {
  (root || document).querySelectorAll("[data-series-url]").forEach(drawChart);
}
document.addEventListener("DOMContentLoaded", function () { drawCharts(document); });
document.addEventListener("htmx:afterSwap", function (event) { drawCharts(event.target); });
`;
