Feature: The expense-split page
  A visitor opens a project with its slug and password, adds members and bills, deletes bills
  and sees the bills, the balances and the settlement plan, all on the page served at /.

  @R11 @R3 @R4 @ab:AB-04
  Scenario: A visitor opens a project and sees its members
    Given a project "Ski trip" with members "Ana, Ben"
    And the page is open
    When the visitor opens the project with its password
    Then the project name shows "Ski trip"
    And the member list shows "Ana"
    And the member list shows "Ben"
    And the message is empty

  @R11 @R3 @category:authorization
  Scenario: A wrong password opens nothing and shows the API's message
    Given a project "Secret club" with members "Vera"
    And the page is open
    When the visitor opens the project with the password "not-the-password"
    Then the message shows the API's message for that request
    And the project name does not show "Secret club"
    And "Vera" is not in the member list

  @R11 @R4 @db_effect:INSERT:members @ab:AB-03
  Scenario: A visitor adds a member, who then has a zero balance
    Given a project "Flat share" with members "Ana"
    And the page is open
    When the visitor opens the project with its password
    And the visitor adds the member "Dora"
    Then the member list shows "Dora"
    And the balance of "Dora" shows "0.00"
    And the message is empty

  @R11 @R4 @category:state
  Scenario: A duplicate member name is refused with the API's message
    Given a project "Choir" with members "Ana, Ben"
    And the page is open
    When the visitor opens the project with its password
    And the visitor adds the member "Ben"
    Then the message shows the API's message for that request
    And the member list shows "Ben" once

  @R11 @R5 @R6 @R7 @db_effect:INSERT:bills @ab:AB-03
  Scenario: A visitor records a bill and the balances follow the split
    Given a project "Road trip" with members "Ana, Ben, Cy"
    And the page is open
    When the visitor opens the project with its password
    And the visitor adds a bill of "10.02" paid by "Ana" for "Ana, Ben, Cy" dated "2030-04-01" described "Fuel"
    Then the bill list shows "Fuel" with "10.02"
    And the balance of "Ana" shows "6.68"
    And the balance of "Ben" shows "-3.34"
    And the balance of "Cy" shows "-3.34"
    And the message is empty

  @R11 @R5 @R7
  Scenario: An amount typed as 12.50 is recorded as 1250 cents and shown as 12.50
    Given a project "Car park" with members "Ana, Ben"
    And the page is open
    When the visitor opens the project with its password
    And the visitor adds a bill of "12.50" paid by "Ana" for "Ben" dated "2030-06-01" described "Parking"
    Then the bill "Parking" is recorded with 1250 cents
    And the bill list shows "Parking" with "12.50"
    And the balance of "Ana" shows "12.50"
    And the balance of "Ben" shows "-12.50"

  @R11 @R5 @R7 @R8
  Scenario: The page's amount example 1234 cents is shown as 12.34
    Given a project "Cinema" with members "Ana, Ben"
    And "Ana" paid "12.34" for "Ben" described "Tickets"
    And the page is open
    When the visitor opens the project with its password
    Then the bill "Tickets" is recorded with 1234 cents
    And the bill list shows "Tickets" with "12.34"
    And the balance of "Ana" shows "12.34"
    And the balance of "Ben" shows "-12.34"
    And the settlement plan is "Ben pays Ana 12.34"

  @R11 @R5 @R7 @R8
  Scenario: The page's amount example -50 cents is shown as -0.50
    Given a project "Bakery" with members "Ana, Ben"
    And "Ana" paid "0.50" for "Ben" described "Bread roll"
    And the page is open
    When the visitor opens the project with its password
    Then the bill "Bread roll" is recorded with 50 cents
    And the balance of "Ben" shows "-0.50"
    And the balance of "Ana" shows "0.50"
    And the bill list shows "Bread roll" with "0.50"
    And the settlement plan is "Ben pays Ana 0.50"

  @R11 @R7
  Scenario: The page's amount example 0 cents is shown as 0.00
    Given a project "Garden" with members "Ana, Ben, Cy"
    And "Ana" paid "12.34" for "Ben" described "Seeds"
    And the page is open
    When the visitor opens the project with its password
    Then the balance of "Cy" shows "0.00"
    And the balance of "Ana" shows "12.34"

  @R11 @R6 @R7 @category:state
  Scenario: Weights change the shares shown in the balances
    Given a project "Family holiday" with members "Mum:3, Kid:1"
    And the page is open
    When the visitor opens the project with its password
    And the visitor adds a bill of "40.04" paid by "Kid" for "Mum, Kid" dated "2030-07-14" described "Ice cream"
    Then the balance of "Mum" shows "-30.03"
    And the balance of "Kid" shows "30.03"

  @R11 @R8 @category:state
  Scenario: The settlement plan is shown in the API's order
    Given a project "Book club" with members "Ana, Ben, Cy"
    And "Ana" paid "90.00" for "Ana, Ben, Cy" described "Books"
    And "Ben" paid "10.00" for "Cy" described "Coffee"
    And the page is open
    When the visitor opens the project with its password
    Then the settlement plan is "Cy pays Ana 40.00; Ben pays Ana 20.00"

  @R11 @R5 @R7 @R8 @db_effect:DELETE:bills @ab:AB-04
  Scenario: Deleting a bill on the page settles the balances again
    Given a project "Lunch group" with members "Ana, Ben"
    And "Ana" paid "25.00" for "Ben" described "Sandwiches"
    And the page is open
    When the visitor opens the project with its password
    Then the settlement plan is "Ben pays Ana 25.00"
    When the visitor deletes the bill "Sandwiches"
    Then the bill list does not show "Sandwiches"
    And the balance of "Ana" shows "0.00"
    And the balance of "Ben" shows "0.00"
    And the settlement plan is empty

  @R11 @R5 @category:validation
  Scenario: A bill without owers is refused with the API's message and not listed
    Given a project "Sports club" with members "Ana, Ben"
    And the page is open
    When the visitor opens the project with its password
    And the visitor adds a bill of "5.00" paid by "Ana" for nobody dated "2030-05-05" described "Balls"
    Then the message shows the API's message for that request
    And the bill list does not show "Balls"
    And the balance of "Ana" shows "0.00"

  @R11 @R12 @category:api_surface
  Scenario: Names and descriptions are shown as the text they are
    Given a project "<b>Bold</b> & co" with members "<img src=x onerror=alert(1)> Lee, Max"
    And "Max" paid "3.00" for "<img src=x onerror=alert(1)> Lee" described "<script>alert(2)</script> snacks"
    And the page is open
    When the visitor opens the project with its password
    Then the project name shows "<b>Bold</b> & co"
    And the member list shows "<img src=x onerror=alert(1)> Lee"
    And the bill list shows "<script>alert(2)</script> snacks" with "3.00"
    And the balance of "<img src=x onerror=alert(1)> Lee" shows "-3.00"
