import { useState } from 'preact/hooks';
import { generatePassword } from '../lib/connect';

export interface PasswordChoice {
  mode: 'generate' | 'type';
  setMode: (m: 'generate' | 'type') => void;
  typed: string;
  setTyped: (s: string) => void;
  /** What is sent: the generated one (made once per form) or the typed one. */
  password: string;
}

export function usePasswordChoice(): PasswordChoice {
  const [mode, setMode] = useState<'generate' | 'type'>('generate');
  const [typed, setTyped] = useState('');
  const [generated] = useState(generatePassword);
  return { mode, setMode, typed, setTyped, password: mode === 'generate' ? generated : typed };
}

/** Generate (the default) or type a password; the API shows it back once after it is set. */
export function PasswordFields({ choice }: { choice: PasswordChoice }) {
  return (
    <fieldset>
      <legend>Password</legend>
      <label class="check">
        <input
          type="radio"
          name="pwmode"
          value="generate"
          checked={choice.mode === 'generate'}
          onChange={() => choice.setMode('generate')}
        />{' '}
        Generate one (32 random characters)
      </label>
      <label class="check">
        <input
          type="radio"
          name="pwmode"
          value="type"
          checked={choice.mode === 'type'}
          onChange={() => choice.setMode('type')}
        />{' '}
        Type one (at least 20 characters)
      </label>
      {choice.mode === 'type' ? (
        <label>
          Password
          <input
            name="password"
            type="password"
            autoComplete="new-password"
            minLength={20}
            required
            value={choice.typed}
            onInput={(e) => choice.setTyped(e.currentTarget.value)}
          />
        </label>
      ) : null}
    </fieldset>
  );
}
