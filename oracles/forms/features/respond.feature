Feature: The respondent's page
  A respondent opens a published form at /f/{slug}, answers its questions and submits them,
  all on the page the service serves; the owner's side is set up through the API.

  Background:
    Given a form "Team lunch" with the questions
      | title       | type            | required | settings                         |
      | Your name   | short_text      | yes      | max_length=20                    |
      | Guests      | number          | no       | min=0,max=5                      |
      | Main course | single_choice   | yes      | options=Fish;Pasta;Salad         |
      | Extras      | multiple_choice | no       | options=Bread;Wine;Cake,max_selections=2 |

  @R14 @R8 @category:api_surface @ab:AB-04
  Scenario: The page shows the form's title and its questions in order
    Given the form "Team lunch" is published
    When the respondent opens the form "Team lunch"
    Then the page shows the title "Team lunch"
    And the questions are "Your name", "Guests", "Main course", "Extras" in that order
    And the question "Main course" offers "Fish", "Pasta", "Salad"

  @R14 @R8 @db_effect:INSERT:responses @ab:AB-03
  Scenario: A respondent answers every question and is thanked
    Given the form "Team lunch" is published
    When the respondent opens the form "Team lunch"
    And the respondent answers "Your name" with "Ada Lovelace"
    And the respondent answers "Guests" with "2"
    And the respondent chooses "Pasta" for "Main course"
    And the respondent chooses "Wine" for "Extras"
    And the respondent chooses "Bread" for "Extras"
    And the respondent submits the form
    Then the page thanks the respondent
    And the message is empty
    And the form "Team lunch" has 1 response with "Your name" "Ada Lovelace", "Guests" 2, "Main course" "Pasta" and "Extras" "Bread;Wine"

  @R14 @R8
  Scenario: A number typed as 2.5 is stored as the number 2.5
    Given the form "Team lunch" is published
    When the respondent opens the form "Team lunch"
    And the respondent answers "Your name" with "Gus"
    And the respondent answers "Guests" with "2.5"
    And the respondent chooses "Fish" for "Main course"
    And the respondent submits the form
    Then the page thanks the respondent
    And the form "Team lunch" has 1 response answering "Guests" with the number 2.5

  @R14 @R8
  Scenario: A number typed as 42 is stored as the number 42
    Given a form "Quiz" with the questions
      | title      | type   | required | settings |
      | The answer | number | yes      |          |
    And the form "Quiz" is published
    When the respondent opens the form "Quiz"
    And the respondent answers "The answer" with "42"
    And the respondent submits the form
    Then the page thanks the respondent
    And the form "Quiz" has 1 response answering "The answer" with the number 42

  @R14 @R9 @category:validation
  Scenario: A required question left blank is refused with a message
    Given the form "Team lunch" is published
    When the respondent opens the form "Team lunch"
    And the respondent chooses "Fish" for "Main course"
    And the respondent submits the form
    Then the page shows an error message
    And the page does not thank the respondent
    And the form "Team lunch" has no responses

  @R14 @R9 @category:validation
  Scenario: A number beyond its maximum is refused with a message
    Given the form "Team lunch" is published
    When the respondent opens the form "Team lunch"
    And the respondent answers "Your name" with "Bo"
    And the respondent answers "Guests" with "6"
    And the respondent chooses "Fish" for "Main course"
    And the respondent submits the form
    Then the page shows an error message
    And the form "Team lunch" has no responses

  @R14 @R9 @category:validation
  Scenario: Too many selections are refused with a message
    Given the form "Team lunch" is published
    When the respondent opens the form "Team lunch"
    And the respondent answers "Your name" with "Cy"
    And the respondent chooses "Salad" for "Main course"
    And the respondent chooses "Bread" for "Extras"
    And the respondent chooses "Wine" for "Extras"
    And the respondent chooses "Cake" for "Extras"
    And the respondent submits the form
    Then the page shows an error message
    And the form "Team lunch" has no responses

  @R14 @R9 @category:state
  Scenario: A success after a refusal clears the message
    Given the form "Team lunch" is published
    When the respondent opens the form "Team lunch"
    And the respondent chooses "Fish" for "Main course"
    And the respondent submits the form
    Then the page shows an error message
    When the respondent answers "Your name" with "Dee"
    And the respondent submits the form
    Then the page thanks the respondent
    And the message is empty
    And the form "Team lunch" has 1 response

  @R14 @R8 @category:state
  Scenario: A closed form shows the API's message and takes nothing
    Given the form "Team lunch" is published
    And the form "Team lunch" is closed
    When the respondent opens the form "Team lunch"
    And the respondent answers "Your name" with "Eve"
    And the respondent chooses "Fish" for "Main course"
    And the respondent submits the form
    Then the message shows the API's message for a submission to "Team lunch"
    And the form "Team lunch" has no responses

  @R14 @R10 @category:state
  Scenario: A form at its response limit shows the API's message
    Given the form "Team lunch" is published with a response limit of 1
    And someone has answered the form "Team lunch"
    When the respondent opens the form "Team lunch"
    And the respondent answers "Your name" with "Finn"
    And the respondent chooses "Salad" for "Main course"
    And the respondent submits the form
    Then the message shows the API's message for a submission to "Team lunch"
    And the form "Team lunch" has 1 response

  @R14 @R8 @category:authorization
  Scenario: A draft form is not shown to respondents
    Given the form "Team lunch" is a draft
    When the respondent opens the form "Team lunch"
    Then the page shows an error message
    And the page shows no questions

  @R14 @R15 @category:api_surface
  Scenario: Titles and options are shown as the text they are
    Given a form "<b>Bold</b> & co" with the questions
      | title                                 | type          | required | settings                                   |
      | <img src=x onerror=alert(1)> Name     | short_text    | no       | max_length=50                              |
      | <i>Pick</i>                           | single_choice | no       | options=<script>alert(1)</script>;Plain    |
    And the form "<b>Bold</b> & co" is published
    When the respondent opens the form "<b>Bold</b> & co"
    Then the page shows the title "<b>Bold</b> & co"
    And the questions are "<img src=x onerror=alert(1)> Name", "<i>Pick</i>" in that order
    And the question "<i>Pick</i>" offers "<script>alert(1)</script>", "Plain"
    And the page holds no element the text would make
