"""Headless Chromium driven by Selenium for the console tests (Debian's ``chromium`` and
``chromium-driver``), and small helpers to wait on and log into the console."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from .helpers import Server

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


def chromium(downloads: Path, width: int = 1400, height: int = 1000) -> Any:
    """A headless Chromium saving downloads into ``downloads``."""
    assert CHROMIUM and CHROMEDRIVER, (
        "the console tests need Debian's chromium and chromium-driver: "
        "apt-get install -y chromium chromium-driver"
    )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--window-size={width},{height}",
    ):
        options.add_argument(arg)
    options.add_experimental_option(
        "prefs",
        {"download.default_directory": str(downloads), "download.prompt_for_download": False},
    )
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.execute_cdp_cmd(
        "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)}
    )
    driver.set_page_load_timeout(60)
    return driver


def wait(driver: Any, condition: Any, seconds: float = 180) -> Any:
    """Wait for ``condition``; elements the page replaced while it was checked count as not
    yet (the console re-renders its tables after every change)."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    ignored = (NoSuchElementException, StaleElementReferenceException)
    return WebDriverWait(driver, seconds, 0.2, ignored).until(condition)


def log_in(driver: Any, server: Server, user: str, password: str, page: str = "/query") -> None:
    """Log in through the form (after logging out whoever was in) and open ``page``."""
    from selenium.webdriver.common.by import By

    driver.get(server.url + "/logout")
    driver.get(f"{server.url}/login?redirect={page}")
    wait(driver, lambda d: d.find_elements(By.NAME, "j_username"))
    driver.find_element(By.NAME, "j_username").send_keys(user)
    driver.find_element(By.NAME, "j_password").send_keys(password)
    driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait(driver, lambda d: d.current_url.endswith(page) and d.find_elements(By.ID, "page-title"))


def run_sql(driver: Any, sql: str, seconds: float = 180) -> str:
    """Type ``sql`` into the Query page, run it with Ctrl+Enter and wait for the status line."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    box = driver.find_element(By.ID, "sql")
    driver.execute_script("arguments[0].value = ''; arguments[0].focus();", box)
    box.send_keys(sql)
    box.send_keys(Keys.CONTROL, Keys.ENTER)
    wait(driver, lambda d: d.find_element(By.ID, "run").is_enabled() and _settled(d), seconds)
    return str(driver.find_element(By.ID, "status").text)


def _settled(driver: Any) -> bool:
    from selenium.webdriver.common.by import By

    text = driver.find_element(By.ID, "status").text
    return bool(text) and not text.startswith(("running", "cancelling"))
