// Test hook for the headless-browser test (browser_test.go adds it to a copy
// of the page; reports do not ship it): opened as report.html#test, the
// page picks another file and another group as a user would, then writes
// what the browser shows, as JSON, into a pre element with id
// "test-result". It is a script of its own so that it still reports when
// report.js failed to run.
window.addEventListener("load", function () {
  "use strict";
  if (location.hash !== "#test") return;
  var result = {};
  try {
    var step = document.getElementById("step-select"), group = document.getElementById("group-select");
    if (step && step.options.length) {
      step.selectedIndex = step.selectedIndex === 0 ? step.options.length - 1 : 0;
      step.dispatchEvent(new Event("change"));
      group.selectedIndex = group.options.length > 1 ? 1 : 0;
      group.dispatchEvent(new Event("change"));
      result.step = step.options[step.selectedIndex].text;
      result.group = group.options[group.selectedIndex].text;
    }
    var panel = document.getElementById("trajectories");
    result.members = document.querySelectorAll("#trajectories .member").length;
    result.text = panel ? panel.innerText : "";
    result.charts = document.querySelectorAll(".chart svg").length;
    result.curves = document.querySelectorAll(".chart svg path[stroke]").length;
  } catch (e) {
    window.__errors.push("test hook: " + e);
  }
  result.errors = window.__errors;
  var pre = document.createElement("pre");
  pre.id = "test-result";
  pre.textContent = JSON.stringify(result);
  document.body.appendChild(pre);
  document.title = "test done";
});
