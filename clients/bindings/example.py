"""A typed walk through the reference app, checked by mypy --strict (scripts/test.sh) and run by
clients/python/tests/test_bindings.py."""

from __future__ import annotations

from typing import List

import vmhost
from viewmodels import Login, ProductList, ProductListItemsItem


def log_in_and_list(host: vmhost.Host) -> List[str]:
    login = Login.create(host, {"mode": "password"})
    login.subscribe()
    navigated: List[str] = []
    login.on_navigate(lambda value: navigated.append(value["route"]))
    login.set_username("13800138000")
    login.set_password("123456")
    assert login.canSubmit
    login.submit()
    products = ProductList.create(host, {"pageSize": 5})
    products.subscribe(diff=True)
    products.refresh()
    items: List[ProductListItemsItem] = products.items
    return navigated + [item["name"] for item in items]
