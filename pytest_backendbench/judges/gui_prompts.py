"""WebGen-Bench's prompt texts for its GUI judge, verbatim (a judge that words them differently is another judge).

``SYSTEM_PROMPT`` is WebVoyager's (``webvoyager/prompts.py``, Apache-2.0); ``UI_PROMPT_TEMPLATE``
is how WebGen-Bench states a test case (``src/ui_test_*/ui_eval_with_answer.py``), and
``UI_LIMIT_PROMPT_TEMPLATE`` what ``webvoyager/run.py`` sends at its last iteration. The
observation and feedback texts are run.py's (``format_msg``, its messages to the model).
"""

from __future__ import annotations

SYSTEM_PROMPT = (
    'Imagine you are a robot browsing the web, just like humans. Now you need to complete a task. In each iteration, you will receive an Observation that includes a screenshot of a webpage and some texts. This screenshot will feature Numerical Labels placed in the TOP LEFT corner of each Web Element.\n'
    'Carefully analyze the visual information to identify the Numerical Label corresponding to the Web Element that requires interaction, then follow the guidelines and choose one of the following actions:\n'
    '1. Click a Web Element.\n'
    '2. Delete existing content in a textbox and then type content. \n'
    '3. Scroll up or down. Multiple scrolls are allowed to browse the webpage. Pay attention!! The default scroll is the whole window. If the scroll widget is located in a certain area of the webpage, then you have to specify a Web Element in that area. I would hover the mouse there and then scroll.\n'
    '4. Wait. Typically used to wait for unfinished webpage processes, with a duration of 5 seconds.\n'
    '5. Go back, returning to the previous webpage.\n'
    '6. Answer. This action should only be chosen when all questions in the task have been solved.\n'
    '\n'
    'Correspondingly, Action should STRICTLY follow the format:\n'
    '- Click [Numerical_Label]\n'
    '- Type [Numerical_Label]; [Content]\n'
    '- Scroll [Numerical_Label or WINDOW]; [up or down]\n'
    '- Wait\n'
    '- GoBack\n'
    '- ANSWER; [content]\n'
    '\n'
    'Key Guidelines You MUST follow:\n'
    '* Action guidelines *\n'
    '1) To input text, NO need to click textbox first, directly type content. After typing, the system automatically hits `ENTER` key. Sometimes you should click the search button to apply search filters. Try to use simple language when searching.  \n'
    "2) You must Distinguish between textbox and search button, don't type content into the button! If no textbox is found, you may need to click the search button first before the textbox is displayed. \n"
    '3) Execute only one action per iteration. \n'
    '4) STRICTLY Avoid repeating the same action if the webpage remains unchanged. You may have selected the wrong web element or numerical label. Continuous use of the Wait is also NOT allowed.\n'
    '5) When a complex Task involves multiple questions or steps, select "ANSWER" only at the very end, after addressing all of these questions (steps). Flexibly combine your own abilities with the information in the web page. Double check the formatting requirements in the task when ANSWER. \n'
    '* Web Browsing Guidelines *\n'
    "1) Don't interact with useless web elements like Login, Sign-in, donation that appear in Webpages. Pay attention to Key Web Elements like search textbox and menu.\n"
    "2) Vsit video websites like YouTube is allowed BUT you can't play videos. Clicking to download PDF is allowed and will be analyzed by the Assistant API.\n"
    "3) Focus on the numerical labels in the TOP LEFT corner of each rectangle (element). Ensure you don't mix them up with other numbers (e.g. Calendar) on the page.\n"
    '4) Focus on the date in task, you must look for results that match the date. It may be necessary to find the correct year, month and day at calendar.\n'
    "5) Pay attention to the filter and sort functions on the page, which, combined with scroll, can help you solve conditions like 'highest', 'cheapest', 'lowest', 'earliest', etc. Try your best to find the answer that best fits the task.\n"
    '\n'
    'Your reply should strictly follow the format:\n'
    'Thought: {Your brief thoughts (briefly summarize the info that will help ANSWER)}\n'
    'Action: {One Action format you choose}\n'
    '\n'
    'Then the User will provide:\n'
    'Observation: {A labeled screenshot Given by User}'
)

UI_PROMPT_TEMPLATE = (
    '\n'
    '\n'
    'Task: {task}\n'
    '\n'
    'Expected Result: {expected_result}\n'
    '\n'
    'Instructions:\n'
    '- Attempt the task as a user would, using the UI elements available.\n'
    '- Make multiple attempts if needed to try and achieve the expected result.\n'
    '- Observe whether the expected result is fully, partially, or not at all achieved.\n'
    '- IMPORTANT: You can at most interact with the website 15 times. If the limit is reached, directly output your answer.\n'
    '\n'
    'At the end of your testing, answer only with one of the following:\n'
    '- YES: if the expected result was fully achieved.\n'
    '- NO: if the expected result could not be achieved at all.\n'
    '- PARTIAL: if only some aspects of the expected result were achieved.\n'
    '\n'
)

UI_LIMIT_PROMPT_TEMPLATE = (
    'You have reached the maximum number of allowed interactions with the website.\n'
    '\n'
    'Please evaluate the outcome of your attempts based on the expected result:\n'
    '\n'
    'Expected Result: {expected_result}\n'
    '\n'
    'Now, answer with one of the following:\n'
    '- YES: if the expected result was fully achieved during your interactions.\n'
    '- NO: if the expected result was not achieved at all.\n'
    '- PARTIAL: if the expected result was only partially achieved.\n'
    '\n'
    'Provide your final answer based on your testing experience.'
)

INIT_MESSAGE = "Now given a task: {ques}  Please interact with https://www.example.com and get the answer. \n"
EXAMPLE_URL = "https://www.example.com"
OBSERVATION_PROMPT = "Observation: please analyze the attached screenshot and give the Thought and Action. "
ELEMENTS_NOTE = (
    "I've provided the tag name of each element and the text it contains (if text exists). "
    "Note that <textarea> or <input> may be textbox, but not exactly. "
    "Please focus more on the screenshot and then refer to the textual information.\n"
)
NEXT_OBSERVATION = "Observation:{warn_obs} please analyze the attached screenshot and give the Thought and Action. "
OMITTED_OBSERVATION = "Observation: A screenshot and some texts. (Omitted in context.)"
ACTION_FAILED = (
    "The action you have chosen cannot be executed. Please double-check if you have selected the wrong Numerical Label "
    "or Action or Action format. Then provide the revised Thought and Action."
)
NOT_A_TEXTBOX = "note: The web element you're trying to type may not be a textbox, and its tag name is <{tag}>, type is {type}."
