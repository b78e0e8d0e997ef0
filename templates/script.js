// Optional: the page reads the same without it. Opens every table
// alternative before printing, so a printout shows the numbers.
(function(){window.addEventListener("beforeprint",function(){document.querySelectorAll("details").forEach(function(d){d.open=true;});});})();
