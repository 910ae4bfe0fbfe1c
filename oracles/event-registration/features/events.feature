Feature: The events page
  A visitor sees the events with their seats left, creates events and registers for them,
  all on the page the service serves at /.

  @R9 @R2 @db_effect:INSERT:events @ab:AB-03
  Scenario: A visitor creates an event and sees it in the list
    Given the events page is open
    When the visitor creates the event "Board games night" starting "2032-01-10T19:00:00Z" with 12 seats
    Then the event list shows "Board games night" with "12 seats left"

  @R9 @R4 @db_effect:INSERT:registrations @ab:AB-03
  Scenario: A visitor registers for an event and appears in its attendee list
    Given an event "Pottery class" with 5 seats exists
    And the events page is open
    When the visitor selects the event "Pottery class"
    And the visitor registers as "Ada Lovelace" with email "ada@example.org"
    Then the attendee list shows "Ada Lovelace"
    And the event list shows "Pottery class" with "4 seats left"
    And the message is empty

  @R9 @R6 @category:state
  Scenario: A full event refuses a registration on the page
    Given an event "Tiny workshop" with 1 seats exists
    And "Bob" is registered for "Tiny workshop"
    And the events page is open
    When the visitor selects the event "Tiny workshop"
    And the visitor registers as "Carol" with email "carol@example.org"
    Then the message shows the API's message for registering "Carol" with "carol@example.org" for "Tiny workshop"
    And the attendee list shows "Bob"
    And "Carol" is not in the attendee list
    And the event list shows "Tiny workshop" with "0 seats left"

  @R9 @R5 @category:state
  Scenario: A duplicate registration shows the API's error message and takes no seat
    Given an event "Cooking course" with 3 seats exists
    And "Dora" is registered for "Cooking course" with email "dora@example.org"
    And the events page is open
    When the visitor selects the event "Cooking course"
    And the visitor registers as "Dora Again" with email "DORA@example.org"
    Then the message shows the API's message for registering "Dora Again" with "DORA@example.org" for "Cooking course"
    And "Dora Again" is not in the attendee list
    And the event list shows "Cooking course" with "2 seats left"

  @R9 @R4 @category:state
  Scenario: A success after a refusal clears the message
    Given an event "Yoga morning" with 3 seats exists
    And "Eve" is registered for "Yoga morning" with email "eve@example.org"
    And the events page is open
    When the visitor selects the event "Yoga morning"
    And the visitor registers as "Eve" with email "eve@example.org"
    Then the page shows an error message
    When the visitor registers as "Frank" with email "frank@example.org"
    Then the attendee list shows "Frank"
    And the message is empty
    And the event list shows "Yoga morning" with "1 seats left"

  @R9 @R6 @category:state
  Scenario: Seats count down to zero as visitors register
    Given an event "Chess evening" with 2 seats exists
    And the events page is open
    When the visitor selects the event "Chess evening"
    And the visitor registers as "Gus" with email "gus@example.org"
    Then the event list shows "Chess evening" with "1 seats left"
    When the visitor registers as "Hana" with email "hana@example.org"
    Then the event list shows "Chess evening" with "0 seats left"
    And the attendee list shows "Gus"
    And the attendee list shows "Hana"

  @R9 @R7 @category:state @ab:AB-04
  Scenario: Selecting an event shows its title and its attendees
    Given an event "Film club" with 10 seats exists
    And "Ivo" is registered for "Film club"
    And "Jun" is registered for "Film club"
    And an event "Book club" with 10 seats exists
    And "Kim" is registered for "Book club"
    And the events page is open
    When the visitor selects the event "Film club"
    Then the selected event shows "Film club"
    And the attendee list shows "Ivo"
    And the attendee list shows "Jun"
    And "Kim" is not in the attendee list

  @R9 @R3 @category:state @ab:AB-04
  Scenario: The event list follows the API's order
    Given an event "Later talk" with 5 seats starting "2050-05-05T12:00:00Z" exists
    And an event "Sooner talk" with 5 seats starting "2050-05-05T13:00:00+02:00" exists
    And the events page is open
    Then the event list shows "Sooner talk" before "Later talk"

  @R9 @R2 @category:validation
  Scenario: An invalid new event is refused with a message and not listed
    Given the events page is open
    When the visitor creates the event "Nobody comes" starting "2032-01-10T19:00:00Z" with 0 seats
    Then the page shows an error message
    And the event list does not show "Nobody comes"

  @R9 @R10 @category:api_surface
  Scenario: Titles and names are shown as the text they are
    Given an event "<b>Bold</b> & <i>co</i>" with 4 seats exists
    And "<img src=x onerror=alert(1)> Lee" is registered for "<b>Bold</b> & <i>co</i>"
    And the events page is open
    When the visitor selects the event "<b>Bold</b> & <i>co</i>"
    Then the selected event shows "<b>Bold</b> & <i>co</i>"
    And the attendee list shows "<img src=x onerror=alert(1)> Lee"
