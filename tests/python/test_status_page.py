"""The status page (`GET /` on the admin endpoint, issue 13 item 4) in a
real headless Chromium (Debian's `chromium` and `chromium-driver`, driven
by Selenium): the page loads, shows a job created by the test, and the
job's lag plot gains samples as the page reloads itself; a screenshot is
saved under the test's temporary directory."""

import os
import shutil
import tempfile

import pymysql
import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import start_server, stop_server

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


@pytest.fixture(scope="module")
def srv():
    with tempfile.TemporaryDirectory(prefix="tributary-status-") as d:
        proc, port, admin_port = start_server(os.path.join(d, "data"))
        yield port, admin_port, d
        assert stop_server(proc) == 0


@pytest.fixture
def browser():
    opts = Options()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1000,1400"):
        opts.add_argument(a)
    # Chromium puts its profile and singleton-socket directories under
    # TMPDIR: a directory of the test's own, removed after the browser quits.
    with tempfile.TemporaryDirectory(prefix="tributary-chromium-") as tmp:
        opts.add_argument(f"--user-data-dir={os.path.join(tmp, 'profile')}")
        env = {**os.environ, "TMPDIR": tmp}
        driver = webdriver.Chrome(service=Service(CHROMEDRIVER, env=env), options=opts)
        yield driver
        driver.quit()


def samples(driver, svg_id):
    """The plot's sample count, or -1 while the page (reloading) lacks it."""
    found = driver.find_elements(By.ID, svg_id)
    try:
        return int(found[0].get_attribute("data-samples")) if found else -1
    except Exception:  # the element went stale under a reload
        return -1


def test_status_page_shows_a_job_and_its_lag_plot_updates(srv, browser):
    port, admin, tmp = srv
    with pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True) as c, \
            c.cursor() as cur:
        cur.execute("CREATE DATABASE st")
        cur.execute("CREATE TABLE st.t (id INT PRIMARY KEY, body TEXT)")
        cur.execute("INSERT INTO st.t VALUES (1, 'one'), (2, 'two')")
        cur.execute("CREATE FULLTEXT INDEX ft ON st.t(body) ASYNC")
        browser.get(f"http://127.0.0.1:{admin}/")
        assert browser.title == "Tributary status"
        wait = WebDriverWait(browser, 30, poll_frequency=0.2)
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, 'tr.job[data-job="st.t.ft"]'))
        row = browser.find_element(By.CSS_SELECTOR, 'tr.job[data-job="st.t.ft"]').text
        assert "st.t.ft" in row
        first = wait.until(lambda d: (n := samples(d, "lag-st.t.ft")) > 0 and n)
        # Commits keep coming; the page reloads itself and the plot grows.
        for i in range(3, 8):
            cur.execute(f"INSERT INTO st.t VALUES ({i}, 'row {i}')")
        wait.until(lambda d: samples(d, "lag-st.t.ft") > first + 1)
        assert samples(browser, "commit-rate") >= 1
        points = browser.find_element(By.CSS_SELECTOR, "#commit-rate polyline")
        assert len(points.get_attribute("points").split()) >= 1
        shot = os.path.join(tmp, "status-page.png")
        assert browser.save_screenshot(shot)
        assert os.path.getsize(shot) > 10_000
