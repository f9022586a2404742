"""Terminal demo app: the login, product list and menu group screens drawn from a vmhost.

Run ``python3 -m vmhost.demo [--locale en] [host options…]``. Everything on screen except the text
being typed comes from the host's outputs and events.
"""
