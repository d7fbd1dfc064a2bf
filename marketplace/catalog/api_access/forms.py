"""Forms of the API user's sign-in (validation only; ``sign_in.py`` does the work)."""

from __future__ import annotations

from django import forms


class SignInForm(forms.Form):
    username = forms.CharField(max_length=200)
    password = forms.CharField(max_length=500, widget=forms.PasswordInput)


class CodeForm(forms.Form):
    code = forms.RegexField(
        regex=r"^\s*\d{4,10}\s*$",
        error_messages={"invalid": "The code is the digits from the e-mail."},
    )

    def clean_code(self) -> str:
        code: str = self.cleaned_data["code"]
        return code.strip()
