// jQuery comes from code.jquery.com: without it the title stays "Loading..."
$(function () {
  $("[data-testid='title']").text("Meeting planner");
  $("[data-testid='add-meeting']").on("click", function () {
    var date = $("[data-testid='meeting-date']").val();
    var time = $("[data-testid='meeting-time']").val();
    var text = date && time ? date + " " + time : "incomplete";
    $("<li>").text(text).appendTo("[data-testid='meetings']");
  });
});
